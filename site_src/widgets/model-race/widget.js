/* The race, measured: the tiny model generates the same prompt twice in the
 * reader's browser (kvlab.generate, onnxruntime-web), with and without its KV
 * cache, greedily. The chart plots the measured milliseconds of every decode
 * step. JS times and renders: kvlab.race_measured (Pyodide) turns the two runs'
 * raw tokens and step times into every number and sentence shown (the speed-up, the
 * first differing token, the theory for the same steps; its `view`, status line included). */
kvlab.register("model-race", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const runButton = form.elements.run;
    const stopButton = form.elements.stop;
    const plot = root.querySelector(".kv-plot");
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const lanes = {
      cache: { bar: field("progress-cache"), text: field("progress-cache-text") },
      noCache: { bar: field("progress-no-cache"), text: field("progress-no-cache-text") },
    };
    // errors get this widget's own wording; progress comes from ctx.call / ctx.model
    const status = root.querySelector(".kv-status");
    const bar = status.querySelector("progress");
    let controller = null;
    let started = false;

    function readN() {
      const n = Number(form.n.value); // a range input keeps its value within its min..max (kvlab.inputs.CONTROLS)
      form["n-out"].value = n;
      return n;
    }

    function setLane(lane, k, n, note) {
      lane.bar.max = n;
      lane.bar.value = k;
      lane.text.textContent = note || `step ${k} of ${n}`;
    }

    function setRunning(on) {
      runButton.disabled = on;
      stopButton.disabled = !on;
      form.prompt.readOnly = on;
      form.n.disabled = on;
    }

    /* One measured generation; progress goes into its lane. */
    async function measure(lane, prompt, n, useCache, signal) {
      setLane(lane, 0, n, `starting (0 of ${n})`);
      const res = await kvlab.generate({
        prompt, maxNewTokens: n, useCache, temperature: 0, seed: 0, signal,
        onToken: (step) => setLane(lane, step.step + 1, n),
      });
      if (res.stopped) setLane(lane, res.steps.length, n, `stopped at step ${res.steps.length} of ${n}`);
      else setLane(lane, n, n, `done: ${n} of ${n} steps`);
      return res;
    }

    /* A readable error in the status line (the static table is not shown live). */
    function showError(msg) {
      root.dataset.state = "error";
      ctx.say(msg);
      bar.hidden = true;
      status.classList.add("kv-status-error");
    }

    async function run() {
      if (controller) return; // one race at a time
      started = true;
      const prompt = form.prompt.value;
      const n = readN();
      if (!prompt.trim()) {
        showError("Type a prompt first: the model continues your text.");
        form.prompt.focus();
        return;
      }
      controller = new AbortController();
      const signal = controller.signal;
      setRunning(true);
      ctx.setState("loading");
      status.classList.remove("kv-status-error");
      setLane(lanes.cache, 0, n, "waiting");
      setLane(lanes.noCache, 0, n, "waiting");
      // only the model's own download: other widgets on the page may be loading Python
      try {
        ctx.say("Loading the model…");
        await ctx.model();
        // The model's worker warmed both paths up when it loaded, so no timed
        // step pays a first-call cost. A 1-token run tells the prompt length the
        // race will use (a long prompt is cut to fit).
        // Started with n new tokens (so the prompt is cut as in the race), stopped at once.
        const probe = new AbortController();
        signal.addEventListener("abort", () => probe.abort());
        const first = await kvlab.generate({ prompt, maxNewTokens: n, useCache: true, signal: probe.signal, onToken: () => probe.abort() });
        // Python now, not after the race: it loads in its own worker, but it still
        // shares the reader's CPU cores with the timed steps (race_measured then runs at once).
        if (!signal.aborted) await ctx.call("race_theory", { prompt_len: first.promptLen, n_new: n });
        ctx.say(`Racing: ${n} tokens with the cache, then the same ${n} without it.`);
        const cached = await measure(lanes.cache, prompt, n, true, signal);
        const uncached = signal.aborted ? null : await measure(lanes.noCache, prompt, n, false, signal);
        if (!uncached) setLane(lanes.noCache, 0, n, "not run (stopped)");
        const stopped = cached.stopped || !uncached || uncached.stopped;
        await render(cached, uncached, n, stopped);
        ctx.setState("ready");
      } catch (err) {
        const msg = err && err.message ? err.message : String(err);
        console.warn("kvlab model-race", err);
        showError(`Could not run the race in your browser: ${msg.replace(/\.$/, "")}.`);
      } finally {
        controller = null;
        setRunning(false);
      }
    }

    async function render(cached, uncached, n, stopped) {
      // Every number below comes from kvlab.race_measured (Python): JS sends the raw tokens and step times.
      const raw = (res) => ({ tokens: res.steps.map((s) => s.token), ms: res.steps.map((s) => s.ms) });
      const promptLen = cached.promptLen;
      const r = await ctx.call("race_measured", {
        cached: raw(cached), uncached: uncached ? raw(uncached) : null, n_new: n, prompt_len: promptLen,
        prompt_cut: cached.truncated || 0, text_written: cached.text,
      });
      kvlab.kit.bind(root, { view: r.view });
      ctx.say(r.view.status);

      plot.hidden = false;
      const trace = (res, name, color, hover) => ({
        type: "scatter", mode: "lines", name, x: res.steps.slice(1).map((s) => s.position), y: res.steps.slice(1).map((s) => s.ms),
        line: { color, width: 2 }, hovertext: hover, hovertemplate: "%{hovertext}<extra></extra>",
      });
      const traces = [trace(cached, "with the cache", "#1e88e5", r.view.hover.cache)];
      if (uncached) traces.push(trace(uncached, "without the cache", "#e65100", r.view.hover.no_cache));
      await kvlab.kit.plot(root, plot, traces, {
        margin: { l: 60, r: 10, t: 10, b: 50 }, height: 340, legend: { orientation: "h", x: 0, y: 1.12 },
        xaxis: { title: { text: "position of the new token (decode steps)" } },
        yaxis: { title: { text: "ms per token" }, rangemode: "tozero" },
      });
    }

    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      run();
    });
    form.addEventListener("input", (ev) => {
      if (ev.target === form.n || ev.target === form) readN();
    });
    stopButton.addEventListener("click", () => controller && controller.abort());

    plot.hidden = true; // an empty chart until the first race
    readN(); // the form may hold an embed link's n
    return {
      activate() {
        readN();
        if (!started) ctx.say("Press Run: the model (about 4 MB) loads, then generates twice on your machine.");
      },
    };
  },
});
