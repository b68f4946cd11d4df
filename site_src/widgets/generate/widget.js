/* Try it: the tiny model generating in the browser (kvlab.generate on
 * onnxruntime-web), token by token, with or without the KV cache.
 * Everything shown comes from the model's own outputs (or, before the first
 * run, from kvlab.generation_demo at build time); text from the reader and
 * from the model is always inserted as text, never as HTML.
 *
 * A run is a list of recorded steps; the view shows one step of it (the
 * latest while it streams). "Step back" / "Step forward" and the slider move
 * through the recorded steps: the text up to that token, the phase, the cache
 * grid and the top guesses of that step. Nothing is recomputed. */
kvlab.register("generate", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const form = root.querySelector(".kv-gen-controls");
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const btn = (action) => root.querySelector(`[data-action="${action}"]`);
    const scrub = root.querySelector('.kv-gen-scrub input[name="at"]');
    const fmt = (x) => x.toFixed(3);
    const el = kit.el;
    let controller = null;
    let nLayer = ctx.data.n_layer;

    // The build-time run, in the shape kvlab.generate's steps have.
    const fromPython = (s) => ({
      step: s.step, phase: s.phase, token: s.token, text: s.text, top: s.top,
      tokensIn: s.tokens_in, cacheLenBefore: s.cache_len_before, cacheLenAfter: s.cache_len_after,
      position: s.position !== undefined ? s.position : s.cache_len_after, ms: null,
    });
    let run = { useCache: true, promptText: ctx.data.prompt, steps: ctx.data.steps.map(fromPython), at: ctx.data.steps.length - 1 };

    function syncOutputs() {
      form["max_new_tokens-out"].value = form.max_new_tokens.value;
      form["temperature-out"].value = Number(form.temperature.value).toFixed(1);
      form["top_k-out"].value = form.top_k.value;
    }
    form.addEventListener("input", syncOutputs);
    syncOutputs();

    function setRunning(running) {
      btn("generate").disabled = running;
      btn("stop").disabled = !running;
      ctx.setState(running ? "running" : "ready");
      syncScrub();
    }

    function phaseText(s, useCache) {
      if (!useCache) return `No cache · step ${s.step} · all ${s.tokensIn} tokens computed again, nothing kept after the step`;
      if (s.phase === "prefill") return `Prefill · step 0 · cache empty before, ${s.cacheLenAfter} entries after the step`;
      return `Decode · step ${s.step} · ${s.cacheLenBefore} entries read from the cache, ${s.cacheLenAfter} after the step`;
    }

    /* The grid: one row per layer, one cell per token the step saw; gold where
     * the step computed K and V, grey where it read them from the cache. */
    function renderGrid(s) {
      const grid = field("grid");
      const total = s.position;
      const room = grid.clientWidth - 70;
      grid.style.setProperty("--cell", Math.max(1, Math.min(7, Math.floor(room / Math.max(total, 1)) - 1)) + "px");
      grid.querySelectorAll(".kv-gen-cells").forEach((cells) => {
        while (cells.children.length < total) cells.appendChild(el("span", "kv-cell"));
        while (cells.children.length > total) cells.lastChild.remove();
        for (let i = 0; i < total; i++) cells.children[i].className = "kv-cell " + (i >= s.cacheLenBefore ? "kv-cell-new" : "kv-cell-read");
      });
      grid.setAttribute("aria-label", `${nLayer} layers × ${total} tokens; this step computed ${s.tokensIn} and read ${s.cacheLenBefore} from the cache`);
    }

    /* The top guesses as a table with a bar in each row: no chart library, so it
     * can follow every token as it streams in (a Plotly draw per token is a long task). */
    function renderTop(s) {
      field("topk-which").textContent = `new token ${s.step + 1}`;
      const body = field("topk");
      kit.fillRows(body, s.top.map((t) => {
        const word = el("span");
        word.append(el("code", null, JSON.stringify(t.text).slice(1, -1)));
        if (t.token === s.token) word.append(el("span", "kv-sr-only", " (chosen)"));
        const cell = el("span", "kv-gen-p");
        const bar = el("span", "kv-gen-bar");
        bar.style.setProperty("--p", fmt(t.p));
        cell.append(bar, fmt(t.p));
        return [word, cell];
      }));
      s.top.forEach((t, i) => body.children[i].classList.toggle("kv-gen-chosen", t.token === s.token));
    }

    function stepRow(s) {
      const p = s.top.find((t) => t.token === s.token);
      const cells = [s.step, s.phase, s.tokensIn, s.cacheLenBefore, s.cacheLenAfter, el("code", null, JSON.stringify(s.text).slice(1, -1)), p ? fmt(p.p) : "–"];
      if (s.ms !== null) cells.push(s.ms.toFixed(1));
      const tr = el("tr");
      cells.forEach((c) => {
        const td = el("td");
        if (c instanceof Node) td.appendChild(c);
        else td.textContent = String(c);
        tr.appendChild(td);
      });
      return tr;
    }

    /* The text: the prompt, then every new token of the run; tokens after the
     * step shown are hidden, the step's own token is marked. */
    function renderText() {
      const out = field("output");
      const promptSpan = el("span", "kv-gen-prompt-text", run.promptText);
      const newSpan = el("span", "kv-gen-new");
      run.steps.forEach((s) => newSpan.appendChild(el("span", "kv-tok", s.text)));
      out.replaceChildren(promptSpan, newSpan);
    }

    function show(at) {
      if (!run.steps.length) return;
      run.at = Math.max(0, Math.min(run.steps.length - 1, at));
      const s = run.steps[run.at];
      const toks = field("output").querySelectorAll(".kv-gen-new .kv-tok");
      toks.forEach((t, i) => {
        t.classList.toggle("kv-tok-later", i > run.at);
        t.classList.toggle("kv-tok-now", i === run.at);
      });
      field("phase").textContent = phaseText(s, run.useCache);
      renderGrid(s);
      renderTop(s);
      field("steps").querySelectorAll("tr").forEach((tr, i) => (i === run.at ? tr.setAttribute("aria-current", "step") : tr.removeAttribute("aria-current")));
      syncScrub();
    }

    function syncScrub() {
      const n = run.steps.length;
      scrub.max = String(Math.max(0, n - 1));
      scrub.value = String(run.at);
      scrub.setAttribute("aria-valuetext", n ? `step ${run.steps[run.at].step} of ${run.steps[n - 1].step}` : "no steps yet");
      const busy = Boolean(controller);
      scrub.disabled = busy || n < 2;
      btn("back").disabled = busy || run.at <= 0;
      btn("forward").disabled = busy || run.at >= n - 1;
    }

    btn("back").addEventListener("click", () => show(run.at - 1));
    btn("forward").addEventListener("click", () => show(run.at + 1));
    scrub.addEventListener("input", () => show(Number(scrub.value)));

    function clearRun(promptText) {
      run = { useCache: form.use_cache.checked, promptText: promptText || "", steps: [], at: 0 };
      renderText();
      field("steps").replaceChildren();
      field("phase").textContent = "Press Generate.";
      field("shown").textContent = "Your run: the text so far, the cache and the top guesses of each step, as the model computes them.";
      syncScrub();
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
      controller = new AbortController();
      clearRun(prompt);
      setRunning(true);
      const newSpan = field("output").querySelector(".kv-gen-new");
      try {
        const model = await ctx.model();
        nLayer = model.config.n_layer;
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
            // tokens arrive from the model's worker; show each step as it comes
            run.steps.push(s);
            newSpan.appendChild(el("span", "kv-tok", s.text));
            field("steps").appendChild(stepRow(s));
            show(run.steps.length - 1);
            // one token per frame: the reader sees them arrive (the worker waits; step times exclude it)
            return new Promise((r) => requestAnimationFrame(() => r()));
          },
        });
        if (result.truncated) {
          ctx.notice(`Your prompt was ${result.truncated + result.promptLen} tokens; the model sees at most ${model.config.block_size} including the new ones, so the first ${result.truncated} were dropped and the last ${result.promptLen} kept.`);
          run.promptText = "…" + result.promptText;
          field("output").querySelector(".kv-gen-prompt-text").textContent = run.promptText;
        }
        const ms = result.steps.reduce((a, s) => a + s.ms, 0);
        ctx.say(`${result.stopped ? "Stopped after" : "Generated"} ${result.steps.length} tokens in ${ms.toFixed(0)} ms of model time (${useCache ? "with" : "without"} the cache). Step back through the run with ◀.`);
        root.dataset.tokens = JSON.stringify(result.steps.map((s) => s.token));
        controller = null;
        setRunning(false);
      } catch (err) {
        controller = null;
        setRunning(false);
        ctx.fail(err);
      } finally {
        controller = null;
        syncScrub();
      }
    }

    btn("generate").addEventListener("click", generate);
    btn("stop").addEventListener("click", () => controller && controller.abort());
    btn("reset").addEventListener("click", () => {
      if (controller) controller.abort();
      clearRun(form.prompt.value);
      ctx.notice("");
    });
    form.prompt.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) generate();
    });
    window.addEventListener("pagehide", () => controller && controller.abort());

    // The build-time run, browsable at once (no runtime needed to step through it).
    field("steps").replaceChildren(...run.steps.map(stepRow));
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
