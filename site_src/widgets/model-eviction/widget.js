/* Eviction on the real model: the tiny model reads a long chat token by token
 * (kvlab.generate with streamPrompt) under three caches, then answers the
 * door-code question. Static figure: kvlab.eviction_recall_demo (numpy). */
kvlab.register("model-eviction", {
  mount(root, ctx) {
    const form = root.querySelector("form");
    const plot = root.querySelector(".kv-me-plot");
    const field = (n) => root.querySelector(`[data-field="${n}"]`);
    const episodes = ctx.data.episodes;
    const NAMES = { full: "Full cache", window: "Sliding window", sinks: "Sinks + window" };
    const COLORS = { full: "#3f51b5", window: "#e53935", sinks: "#ffb300" };
    let busy = false;

    function sync() {
      form["window-out"].value = form.window.value;
      form["sinks-out"].value = form.sinks.value;
    }
    form.addEventListener("input", sync);

    function runningMean(xs, k) {
      const out = [];
      let sum = 0;
      xs.forEach((x, i) => {
        sum += x;
        if (i >= k) sum -= xs[i - k];
        out.push(sum / Math.min(i + 1, k));
      });
      return out;
    }

    async function run() {
      if (busy) return;
      busy = true;
      form.querySelector("[data-action=run]").disabled = true;
      ctx.setState("loading");
      const ep = episodes[Number(form.episode.value)];
      const window = Number(form.window.value);
      const sinks = Number(form.sinks.value);
      field("code").textContent = ep.code;
      field("code-pos").textContent = `${ep.code_positions[0] + 1}–${ep.code_positions[ep.code_positions.length - 1] + 1}`;
      field("n-tokens").textContent = ep.n_tokens;
      field("chat").textContent = ep.prompt;
      const results = {};
      try {
        await ctx.model();
        const policies = { full: null, window: { sinks: 0, window }, sinks: { sinks, window } };
        for (const [name, evict] of Object.entries(policies)) {
          ctx.say(`Reading the chat with the ${NAMES[name].toLowerCase()}…`);
          const r = await kvlab.generate({
            prompt: ep.prompt, maxNewTokens: 8, useCache: true, temperature: 0, streamPrompt: true,
            evict: evict || undefined,
            onPromptToken: (t) => t.position % 64 === 0 && ctx.say(`Reading the chat with the ${NAMES[name].toLowerCase()}: token ${t.position + 1} of ${ep.n_tokens}…`),
          });
          const last = r.steps[r.steps.length - 1];
          const held = new Set(evict ? last.cachedPositions : []);
          const digits = r.text.replace(/\D/g, "").slice(0, 4);
          results[name] = {
            answer: r.text,
            kept: last.cacheLenAfter,
            inCache: evict ? ep.code_positions.every((p) => held.has(p)) : true,
            right: [...digits].filter((d, i) => d === ep.code[i]).length,
            nll: r.promptNll,
          };
        }
        render(results, ep, { window, sinks });
        ctx.say("Read and answered in your browser by the tiny model (onnxruntime-web).");
        ctx.setState("ready");
      } catch (err) {
        ctx.fail(err);
      } finally {
        busy = false;
        form.querySelector("[data-action=run]").disabled = false;
      }
    }

    async function render(results, ep, { window, sinks }) {
      for (const [name, r] of Object.entries(results)) {
        const row = root.querySelector(`tr[data-policy="${name}"]`);
        const set = (col, text) => (row.querySelector(`[data-col="${col}"]`).textContent = text);
        row.querySelector("th").textContent = NAMES[name] + (name === "full" ? "" : name === "window" ? ` (${window})` : ` (${sinks} + ${window})`);
        set("kept", r.kept);
        set("in-cache", r.inCache ? "yes" : "no");
        row.querySelector('[data-col="answer"]').replaceChildren(Object.assign(document.createElement("code"), { textContent: r.answer }));
        set("right", `${r.right} of 4`);
        const tail = r.nll.slice(-100);
        set("loss", (tail.reduce((a, b) => a + b, 0) / tail.length).toFixed(3));
      }
      root.dataset.results = JSON.stringify(results);
      const Plotly = await kvlab.plotly();
      const style = getComputedStyle(root);
      const traces = Object.entries(results).map(([name, r]) => ({
        type: "scatter", mode: "lines", name: NAMES[name], line: { color: COLORS[name], width: name === "full" ? 2.5 : 1.8 },
        x: r.nll.map((_, i) => i + 2), y: runningMean(r.nll, 25),
        hovertemplate: `${NAMES[name]}: token %{x}, loss %{y:.2f}<extra></extra>`,
      }));
      Plotly.react(plot, traces, {
        height: 350,
        margin: { l: 55, r: 10, t: 20, b: 70 },
        paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
        font: { color: style.color, family: style.fontFamily, size: 12 },
        legend: { orientation: "h", y: -0.25 },
        xaxis: { title: { text: "token position in the chat" }, gridcolor: "rgba(128,128,128,0.2)" },
        yaxis: { title: { text: "loss (running mean of 25)" }, rangemode: "tozero", gridcolor: "rgba(128,128,128,0.2)" },
        shapes: [{ type: "rect", xref: "x", yref: "paper", x0: ep.code_positions[0] + 1, x1: ep.code_positions[ep.code_positions.length - 1] + 1, y0: 0, y1: 1, fillcolor: "rgba(255,179,0,0.25)", line: { width: 0 } }],
        annotations: [{ x: ep.code_positions[0] + 1, y: 1, yref: "paper", text: "the code", showarrow: false, yanchor: "bottom", font: { size: 11 } }],
      }, { displayModeBar: false, responsive: true });
    }

    form.querySelector("[data-action=run]").addEventListener("click", run);
    return { activate: () => ctx.model().then(() => { ctx.say("Model loaded: press “Read the chat and answer”."); ctx.setState("ready"); }) };
  },
});
