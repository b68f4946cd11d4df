/* Try it: the tiny model generating in the browser (kvlab.generate on
 * onnxruntime-web), token by token, with or without the KV cache.
 * Everything shown comes from the model's own outputs; text from the reader
 * and from the model is always inserted as text, never as HTML. */
kvlab.register("generate", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-gen-controls");
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const btn = (action) => form.querySelector(`[data-action="${action}"]`);
    const plot = root.querySelector(".kv-gen-topk-plot");
    const topTable = root.querySelector(".kv-gen-topk-table");
    const fmt = (x) => x.toFixed(3);
    const el = (tag, cls, text) => {
      const e = document.createElement(tag);
      if (cls) e.className = cls;
      if (text !== undefined) e.textContent = text;
      return e;
    };
    let controller = null;
    let nLayer = ctx.data.n_layer;

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
    }

    function phaseText(s, useCache) {
      if (!useCache) return `No cache · step ${s.step} · all ${s.tokensIn} tokens computed again, nothing kept after the step`;
      if (s.phase === "prefill") return `Prefill · step 0 · cache empty before, ${s.cacheLenAfter} entries after the step`;
      return `Decode · step ${s.step} · ${s.cacheLenBefore} entries read from the cache, ${s.cacheLenAfter} after the step`;
    }

    /* The grid: one row per layer, one cell per token in the sequence. */
    function renderGrid(total, computedFrom) {
      const grid = field("grid");
      const room = grid.clientWidth - 70;
      grid.style.setProperty("--cell", Math.max(1, Math.min(7, Math.floor(room / Math.max(total, 1)) - 1)) + "px");
      const rows = grid.querySelectorAll(".kv-gen-cells");
      rows.forEach((cells) => {
        while (cells.children.length < total) cells.appendChild(el("span", "kv-cell"));
        while (cells.children.length > total) cells.lastChild.remove();
        for (let i = 0; i < total; i++) cells.children[i].className = "kv-cell " + (i >= computedFrom ? "kv-cell-new" : "kv-cell-read");
      });
      grid.setAttribute("aria-label", `${nLayer} layers × ${total} tokens; this step computed ${total - computedFrom} and read ${computedFrom} from the cache`);
    }

    function renderTop(s) {
      field("topk-which").textContent = `new token ${s.step + 1}`;
      const body = field("topk");
      body.replaceChildren(
        ...s.top.map((t) => {
          const tr = el("tr");
          const code = el("code", null, JSON.stringify(t.text).slice(1, -1));
          const td = el("td");
          td.appendChild(code);
          tr.append(td, el("td", null, fmt(t.p)));
          return tr;
        })
      );
      kvlab.plotly().then((Plotly) => {
        const style = getComputedStyle(root);
        const labels = s.top.map((t, i) => `${i + 1}. ${JSON.stringify(t.text)}`);
        Plotly.react(
          plot,
          [{ type: "bar", orientation: "h", x: s.top.map((t) => t.p), y: labels, marker: { color: s.top.map((t) => (t.token === s.token ? "#ffb300" : "#7986cb")) }, hovertemplate: "%{y}: %{x:.3f}<extra></extra>" }],
          {
            height: 60 + 26 * s.top.length,
            margin: { l: 110, r: 10, t: 5, b: 30 },
            paper_bgcolor: "rgba(0,0,0,0)",
            plot_bgcolor: "rgba(0,0,0,0)",
            font: { color: style.color, family: style.fontFamily, size: 12 },
            xaxis: { range: [0, 1], title: { text: "probability" }, gridcolor: "rgba(128,128,128,0.2)" },
            yaxis: { autorange: "reversed", automargin: true },
          },
          { displayModeBar: false, responsive: true }
        );
        topTable.classList.add("kv-visually-hidden");
      });
    }

    function addStepRow(s) {
      const tr = el("tr");
      const code = el("code", null, JSON.stringify(s.text).slice(1, -1));
      const tokenCell = el("td");
      tokenCell.appendChild(code);
      tr.append(el("td", null, s.step), el("td", null, s.phase), el("td", null, s.tokensIn), el("td", null, s.cacheLenBefore), el("td", null, s.cacheLenAfter), tokenCell, el("td", null, fmt(s.top.find((t) => t.token === s.token).p)), el("td", null, s.ms.toFixed(1)));
      field("steps").appendChild(tr);
    }

    function reset(promptText) {
      const out = field("output");
      const promptSpan = el("span", "kv-gen-prompt-text", promptText || "");
      out.replaceChildren(promptSpan, el("span", "kv-gen-new"));
      field("steps").replaceChildren();
      field("phase").textContent = "Press Generate.";
    }

    async function run() {
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
      setRunning(true);
      reset(prompt);
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
            // tokens arrive from the model's worker; render each as it comes
            newSpan.appendChild(el("span", "kv-tok", s.text));
            field("phase").textContent = phaseText(s, useCache);
            const total = s.position; // tokens in the sequence before the new one is appended
            renderGrid(total, useCache ? (s.phase === "prefill" ? 0 : total - 1) : 0);
            renderTop(s);
            addStepRow(s);
          },
        });
        if (result.truncated) {
          ctx.notice(`Your prompt was ${result.truncated + result.promptLen} tokens; the model sees at most ${model.config.block_size} including the new ones, so the first ${result.truncated} were dropped and the last ${result.promptLen} kept.`);
          field("output").querySelector(".kv-gen-prompt-text").textContent = "…" + result.promptText;
        }
        const ms = result.steps.reduce((a, s) => a + s.ms, 0);
        ctx.say(`${result.stopped ? "Stopped after" : "Generated"} ${result.steps.length} tokens in ${ms.toFixed(0)} ms of model time (${useCache ? "with" : "without"} the cache).`);
        root.dataset.tokens = JSON.stringify(result.steps.map((s) => s.token));
        setRunning(false);
      } catch (err) {
        setRunning(false);
        ctx.fail(err);
      } finally {
        controller = null;
      }
    }

    btn("generate").addEventListener("click", run);
    btn("stop").addEventListener("click", () => controller && controller.abort());
    btn("reset").addEventListener("click", () => {
      if (controller) controller.abort();
      reset(form.prompt.value);
      ctx.notice("");
    });
    form.prompt.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) run();
    });
    window.addEventListener("pagehide", () => controller && controller.abort());

    // The model loads when the reader shows intent (a control, or “Make it live”).
    return {
      activate: async () => {
        await ctx.model();
        ctx.say("Model loaded: press Generate (Ctrl+Enter in the prompt).");
        ctx.setState("ready");
      },
    };
  },
});
