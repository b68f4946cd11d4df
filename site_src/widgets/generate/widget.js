/* Try it: the tiny model generating in the browser (kvlab.generate on
 * onnxruntime-web), token by token, with or without the KV cache.
 * Everything shown comes from the model's own outputs (or, before the first
 * run, from kvlab.generate_figure at build time); the template draws it, bound
 * by kit.bind as text, never as HTML.
 *
 * A run is a list of recorded steps; the view shows one step of it. "Step back" /
 * "Step forward" and the slider move through the recorded steps: the text up to
 * that token, the phase, the cache grid and the top guesses of that step.
 * Nothing is recomputed.
 *
 * Play plays the recorded steps back at a pace the reader can follow (300 ms a
 * token unless the speed says otherwise): the model itself runs at full speed
 * and its step times are measured as it runs; only what is shown is paced.
 * Generate plays its run from the first step while the model records it (a
 * step not yet recorded is waited for). With prefers-reduced-motion the run
 * shows its latest step as it comes and Play moves one step a press.
 * `view` is the JS twin of kvlab.widgets.generate.generate_view (the template's):
 * a run in the shape of generate_figure's result → the bound strings. */
kvlab.register("generate", {
  view(data, at = data.steps.length - 1, useCache = true, built = true) {
    const f = kvlab.kit.fixed;
    const steps = data.steps;
    const text = (t) => JSON.stringify(t).slice(1, -1); // views.token_text
    const chosenP = (s) => {
      const t = s.top.find((c) => c.token === s.token);
      return t ? f(t.p, 3) : "–";
    };
    const stepView = (s) => {
      const total = s.position ?? s.cache_len_after;
      const before = s.cache_len_before;
      const phase = !useCache
        ? `No cache · step ${s.step} · all ${s.tokens_in} tokens computed again, nothing kept after the step`
        : s.phase === "prefill"
          ? `Prefill · step 0 · cache empty before, ${s.cache_len_after} entries after the step`
          : `Decode · step ${s.step} · ${before} entries read from the cache, ${s.cache_len_after} after the step`;
      return {
        phase,
        which: `new token ${s.step + 1}`,
        top: s.top.map((t) => ({ text: text(t.text), p: f(t.p, 3), mark: t.token === s.token ? "chosen" : null })),
        cells: Array.from({ length: total }, (_, i) => (i >= before ? "new" : "read")),
        grid_label: `${data.n_layer} layers × ${total} tokens; this step computed ${s.tokens_in} and read ${before} from the cache`,
      };
    };
    const empty = { phase: "Press Generate.", which: "the next token", top: [], cells: [], grid_label: `${data.n_layer} layers, no tokens yet` };
    return {
      shown: built
        ? `The run below was computed when the page was built (the same weights, in numpy): ${data.prompt_len} prompt tokens, then ${steps.length} new ones.`
        : "Your run: the text so far, the cache and the top guesses of each step, as the model computes them.",
      shown_more: built ? " Step back through it, or press Generate for your own." : "",
      prompt: data.prompt,
      tokens: steps.map((s, i) => ({ text: s.text, at: i === at ? "now" : i > at ? "later" : null })),
      rows: steps.map((s, i) => ({
        step: s.step, phase: s.phase, tokens_in: s.tokens_in, before: s.cache_len_before, after: s.cache_len_after,
        text: text(s.text), p: chosenP(s), ms: s.ms === undefined || s.ms === null ? null : f(s.ms, 1), current: i === at ? "step" : null,
      })),
      step: steps.length ? stepView(steps[at]) : empty,
      scrub: steps.length ? `step ${steps[at].step} of ${steps[steps.length - 1].step}` : "no steps yet",
    };
  },
  mount(root, ctx) {
    const kit = kvlab.kit;
    const view = kvlab.widgets.generate.view;
    const form = root.querySelector(".kv-gen-controls");
    const btn = (action) => root.querySelector(`[data-action="${action}"]`);
    const scrub = root.querySelector('.kv-gen-scrub input[name="at"]');
    const grid = root.querySelector(".kv-gen-grid");
    const phase = root.querySelector('[data-field="phase"]');
    const play = btn("play");
    const speed = root.querySelector('.kv-gen-scrub select[name="speed"]');
    let controller = null;
    // what a recorded step does to the step shown: "play" (the pace moves it), "follow" (the latest
    // is shown: a reduced-motion run) or "hold" (the reader's step stays)
    let mode = "hold";
    let timer = null; // the next paced step
    let waiting = false; // playing, at the last recorded step of a run still being recorded
    let summary = ""; // the status line's words on the reader's last run: its measured time

    // The run shown: generate_figure's result, or the reader's run in its shape.
    let run = { data: ctx.data, useCache: true, built: true, at: ctx.data.steps.length - 1 };
    // a step of kvlab.generate, in the shape of generate_figure's steps
    const fromModel = (s) => ({
      step: s.step, phase: s.phase, token: s.token, text: s.text, top: s.top, tokens_in: s.tokensIn,
      cache_len_before: s.cacheLenBefore, cache_len_after: s.cacheLenAfter, position: s.position, ms: s.ms,
    });

    function syncOutputs() {
      kit.writeForm(form, { "max_new_tokens-out": form.max_new_tokens.value, "temperature-out": kit.fixed(Number(form.temperature.value), 1), "top_k-out": form.top_k.value });
    }
    form.addEventListener("input", syncOutputs);
    syncOutputs();

    function setRunning(running) {
      btn("generate").disabled = running;
      btn("stop").disabled = !running;
      ctx.setState(running ? "running" : "ready");
      syncScrub();
    }

    /* ---- play-back: the recorded steps at the reader's pace ---- */
    const pace = () => Number(speed.value) || 300; // ms a token
    function setPlaying(on) {
      mode = on ? "play" : mode === "play" ? "hold" : mode;
      clearTimeout(timer);
      timer = null;
      waiting = false;
      play.setAttribute("aria-pressed", String(on));
      // the readout says the step reached when play-back stops, not each step it passes
      if (on) phase.setAttribute("aria-busy", "true");
      else phase.removeAttribute("aria-busy");
      root.dataset.playing = String(on);
    }
    function tick() {
      timer = null;
      if (mode !== "play") return;
      if (run.at < run.data.steps.length - 1) {
        show(run.at + 1);
        timer = setTimeout(tick, pace());
      } else if (controller) {
        waiting = true; // the model has not recorded the next step yet: it comes in onToken
      } else {
        setPlaying(false); // the end of the run
        if (summary) ctx.say(`${summary} Played back: Play shows it again, ◀ ▶ step through it.`);
      }
    }
    function startPlaying() {
      if (kit.reducedMotion()) {
        // no motion: each press shows the next step (from the last, the first)
        setPlaying(false);
        mode = "hold";
        show(run.at >= run.data.steps.length - 1 ? 0 : run.at + 1);
        ctx.notice("Reduced motion is on, so Play does not advance by itself: each press shows the next step.", "motion");
        return;
      }
      setPlaying(true);
      if (run.at >= run.data.steps.length - 1 && !controller) show(0); // from the start again
      timer = setTimeout(tick, pace());
    }
    play.addEventListener("click", () => (mode === "play" ? setPlaying(false) : startPlaying()));
    speed.addEventListener("change", () => {
      grid.style.setProperty("--pace", pace() + "ms");
      if (timer) {
        clearTimeout(timer);
        timer = setTimeout(tick, pace());
      }
    });
    grid.style.setProperty("--pace", pace() + "ms");
    // a step the reader asks for stops the play-back there
    const hold = () => {
      if (mode !== "hold") setPlaying(false);
      mode = "hold";
    };

    /* The step `at` of the run: the template's text, phase, top guesses, cache grid and steps table. */
    let drawn = null; // the run and step the grid last showed
    function show(at) {
      const n = run.data.steps.length;
      run.at = Math.max(0, Math.min(n - 1, at));
      const v = view(run.data, run.at, run.useCache, run.built);
      kit.bind(root, { view: v });
      // the grid's cells as wide as the grid allows (up to 7 px)
      grid.style.setProperty("--cell", Math.max(1, Math.min(7, Math.floor((grid.clientWidth - 70) / Math.max(v.step.cells.length, 1)) - 1)) + "px");
      // another step: its computed cells light up as they are written (CSS; none with reduced motion)
      if (n && (!drawn || drawn.run !== run || drawn.at !== run.at)) {
        grid.classList.remove("kv-gen-write");
        if (drawn && !kit.reducedMotion()) {
          void grid.offsetWidth; // restart the animation
          grid.classList.add("kv-gen-write");
        }
        drawn = { run, at: run.at };
      }
      syncScrub();
    }

    function syncScrub() {
      const n = run.data.steps.length;
      scrub.max = String(Math.max(0, n - 1));
      scrub.value = String(run.at);
      // the steps recorded so far can be stepped through while the model records more
      scrub.disabled = n < 2;
      btn("back").disabled = run.at <= 0;
      btn("forward").disabled = run.at >= n - 1;
      play.disabled = n < 2 && mode !== "play";
    }

    btn("back").addEventListener("click", () => { hold(); show(run.at - 1); });
    btn("forward").addEventListener("click", () => { hold(); show(run.at + 1); });
    scrub.addEventListener("input", () => { hold(); show(Number(scrub.value)); });

    function clearRun(prompt) {
      run = { data: { prompt: prompt || "", prompt_len: 0, steps: [], n_layer: ctx.data.n_layer }, useCache: form.use_cache.checked, built: false, at: 0 };
      show(0);
    }

    async function generate() {
      if (controller) return; // one run at a time: the button is disabled too
      const prompt = form.prompt.value;
      if (!prompt.trim()) {
        ctx.notice("Type a prompt first: the model continues your text.");
        form.prompt.focus();
        return;
      }
      ctx.notice("");
      const useCache = form.use_cache.checked;
      summary = "";
      controller = new AbortController();
      clearRun(prompt);
      const mine = run; // Reset starts another (empty) run: this one's steps stay out of it
      // the run plays from its first step as it is recorded; with reduced motion its latest step is shown
      if (kit.reducedMotion()) {
        setPlaying(false);
        mode = "follow";
      } else {
        setPlaying(true);
        waiting = true; // for the first step
      }
      setRunning(true);
      phase.setAttribute("aria-busy", "true");
      try {
        const model = await ctx.model();
        mine.data.n_layer = model.config.n_layer;
        ctx.say(useCache ? "Generating with the KV cache…" : "Generating without a cache: every step recomputes the whole sequence…");
        const result = await kvlab.generate({
          prompt,
          maxNewTokens: Number(form.max_new_tokens.value),
          useCache,
          temperature: Number(form.temperature.value),
          topK: Number(form.top_k.value),
          seed: Number(form.seed.value) || 0,
          signal: controller.signal,
          onToken(s) {
            // tokens arrive from the model's worker, at full speed; the step shown follows the mode
            mine.data.steps.push(fromModel(s));
            if (run !== mine) return undefined;
            const last = run.data.steps.length - 1;
            if (mode === "follow") show(last);
            else if (mode === "play" && waiting) {
              waiting = false;
              show(last === 0 ? 0 : run.at + 1);
              timer = setTimeout(tick, pace());
            } else show(run.at); // the steps table and the slider grow
            // one token per frame: the reader sees them arrive (the worker waits; step times exclude it)
            return new Promise((r) => requestAnimationFrame(() => r()));
          },
        });
        if (result.truncated) {
          ctx.notice(`Your prompt was ${result.truncated + result.promptLen} tokens; the model sees at most ${model.config.block_size} including the new ones, so the first ${result.truncated} were dropped and the last ${result.promptLen} kept.`);
          mine.data.prompt = "…" + result.promptText;
        }
        mine.data.prompt_len = result.promptLen;
        const ms = result.steps.reduce((a, s) => a + s.ms, 0);
        const then = mode === "play"
          ? `Playing it back at ${pace()} ms a token: pause, step with ◀ ▶, or change the speed.`
          : "Step back through the run with ◀, or press Play.";
        summary = `${result.stopped ? "Stopped after" : "Generated"} ${result.steps.length} tokens in ${kit.fixed(ms, 0)} ms of model time (${useCache ? "with" : "without"} the cache).`;
        ctx.say(`${summary} ${then}`);
        root.dataset.tokens = JSON.stringify(result.steps.map((s) => s.token));
        controller = null;
        if (mode === "follow") mode = "hold";
        if (mode !== "play") phase.removeAttribute("aria-busy");
        setRunning(false);
        if (waiting) tick(); // play-back at the last step: the run is over
      } catch (err) {
        controller = null;
        setPlaying(false);
        mode = "hold";
        setRunning(false);
        ctx.fail(err);
      } finally {
        controller = null;
        show(run.at);
      }
    }

    btn("generate").addEventListener("click", generate);
    btn("stop").addEventListener("click", () => controller && controller.abort());
    btn("reset").addEventListener("click", () => {
      if (controller) controller.abort();
      setPlaying(false);
      mode = "hold";
      summary = "";
      clearRun(form.prompt.value);
      ctx.notice("");
    });
    form.prompt.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) generate();
    });
    window.addEventListener("pagehide", () => {
      if (controller) controller.abort();
      setPlaying(false);
    });

    // The build-time run, browsable at once (no runtime needed to step through it).
    show(run.at);

    // The model loads when the reader shows intent (a control, or “Make it live”).
    return {
      activate: async () => {
        await ctx.model();
        ctx.say("Model loaded: press Generate (Ctrl+Enter in the prompt), or step back through the run shown.");
        ctx.setState("ready");
      },
    };
  },
});
