/* Decode speed and cost. State → kvlab.serving_figure in Pyodide → render.
 * Every number and its text come from Python; JS handles input and draws. */
kvlab.register("serving", {
  mount(root, ctx) {
    const form = root.querySelector("form.kv-controls");
    const plot = root.querySelector(".kv-plot");
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const steps = ctx.data.options.context_steps;

    let data = ctx.data;

    const el = (tag, text, attrs) => {
      const e = document.createElement(tag);
      if (text !== undefined && text !== null) e.textContent = text;
      Object.entries(attrs || {}).forEach(([k, v]) => e.setAttribute(k, v));
      return e;
    };

    function nearestStep(context) {
      let best = 0;
      steps.forEach((s, i) => {
        if (Math.abs(Math.log(s / context)) < Math.abs(Math.log(steps[best] / context))) best = i;
      });
      return best;
    }

    function readState(ev) {
      if (ev && ev.target === form.context_step) form.context.value = steps[parseInt(form.context_step.value, 10)];
      else if (Number.isFinite(parseInt(form.context.value, 10))) form.context_step.value = nearestStep(parseInt(form.context.value, 10));
      form["batch-out"].value = form.batch.value;
      const context = parseInt(form.context.value, 10);
      const batch = parseInt(form.batch.value, 10);
      return {
        model: form.model.value,
        gpu: form.gpu.value,
        context: Number.isFinite(context) ? context : data.params.context,
        batch: Number.isFinite(batch) ? batch : 1,
        weights: form.weights.value,
        kv: form.kv.value,
      };
    }

    const compute = ctx.live(
      "serving_figure",
      async (result) => {
        data = result;
        form.context.value = data.params.context;
        form.context_step.value = data.context_step;
        form.context_step.setAttribute("aria-valuetext", `${data.context_human} tokens`);
        form.batch.value = data.params.batch;
        form["batch-out"].value = data.params.batch;
        await render();
      },
      (data) => `Computed in your browser by kvlab.serving_figure (${data.params.model} on ${data.params.gpu}, batch ${data.params.batch}).`
    );
    function update(args) {
      return compute(args);
    }

    function renderText() {
      const set = (name, text, title) => {
        const e = field(name);
        e.textContent = text;
        if (title !== undefined) e.title = title;
      };
      const g = data.gpu_info;
      set("model", data.model_info.hf_id);
      set("gpu", g.name);
      set("bandwidth", g.bandwidth_gb_s.toLocaleString("en-US"));
      set("batch", data.params.batch);
      set("context", data.context_human);
      set("working", data.working);
      set("ms", data.ms_per_token_text);
      set("ms1", data.ms_per_token_batch1_text);
      set("tps-chat", data.tokens_per_second_per_chat_text);
      set("tps-total", data.total_tokens_per_second_text);
      set("kv-share", data.kv_share_text);
      set("kv-share1", data.kv_share_batch1_text);
      set("kv-chat", data.kv_per_chat.human, data.kv_per_chat.exact);
      set("weights-bytes", data.weights_bytes.human, data.weights_bytes.exact);
      set("chats", data.chats_that_fit_text);
      set("memory-used", data.memory_used.human, data.memory_used.exact);
      set("memory", g.memory.human, g.memory.exact);
      set("fits", data.fits ? "fits" : "does not fit");
      set("cost", data.cost_text);
      set("cost1", data.cost_batch1_text);
      const price = field("price");
      if (g.price_per_hour !== null) {
        price.replaceChildren(`Price: $${g.price_per_hour}/hour, ${g.price_provider} (`,
          el("a", "source", { href: g.price_source, rel: "noopener" }), `, ${g.price_date}).`);
      } else {
        price.textContent = `No hourly price in the catalogue for this GPU: ${g.note}`;
      }
      set("curve-batch", data.curve.batch);
      field("curve").tBodies[0].replaceChildren(
        ...data.curve.contexts.map((c, i) => {
          const tr = el("tr");
          tr.append(el("th", c.toLocaleString("en-US"), { scope: "row" }), el("td", data.curve.ms_batch1_text[i]),
            el("td", data.curve.ms_batch_text[i] + (data.curve.fits_batch[i] ? "" : " (does not fit)")));
          return tr;
        })
      );
      field("assumptions").replaceChildren(...data.assumptions.map((a) => el("li", a)));
    }

    async function render() {
      renderText();
      const Plotly = await kvlab.plotly();
      const style = getComputedStyle(root);
      const grid = "rgba(128,128,128,0.25)"; // readable on the light and the dark scheme
      const ticks = data.options.context_ticks;
      const c = data.curve;
      const traces = [
        { name: "batch 1", y: c.ms_batch1, color: "#5c6bc0", dash: "solid" },
        { name: `batch ${c.batch}`, y: c.ms_batch.map((v, i) => (c.fits_batch[i] ? v : null)), color: "#ef6c00", dash: "solid" },
        // dotted where the batch no longer fits in memory (joined to the last point that fits)
        { name: `batch ${c.batch}, does not fit in memory`, y: c.ms_batch.map((v, i) => (!c.fits_batch[i] || c.fits_batch[i + 1] === false ? v : null)), color: "#ef6c00", dash: "dot" },
      ].map((t) => ({
        type: "scatter", mode: "lines+markers", name: t.name, x: c.contexts, y: t.y,
        line: { color: t.color, dash: t.dash, width: 2.5 }, marker: { size: 5 },
        hovertemplate: "%{x:,} tokens: %{y:.2f} ms/token<extra>" + t.name + "</extra>",
      }));
      if (c.fits_batch.every(Boolean)) traces.pop();
      Plotly.react(
        plot,
        traces,
        {
          margin: { l: 60, r: 10, t: 10, b: 50 },
          height: 340,
          paper_bgcolor: "rgba(0,0,0,0)",
          plot_bgcolor: "rgba(0,0,0,0)",
          font: { color: style.color, family: style.fontFamily, size: 12 },
          xaxis: { type: "log", title: { text: "context per chat (tokens, log scale)" }, gridcolor: grid, tickvals: ticks.values, ticktext: ticks.labels },
          yaxis: { title: { text: "ms per token (roofline)" }, gridcolor: grid, rangemode: "tozero" },
          legend: { orientation: "h", y: -0.25 },
          shapes: [{ type: "line", xref: "x", yref: "paper", x0: data.params.context, x1: data.params.context, y0: 0, y1: 1,
            line: { color: style.color, width: 1, dash: "dash" } }],
        },
        { displayModeBar: false, responsive: true }
      );
    }

    form.addEventListener("input", (ev) => update(readState(ev)));
    return { activate: () => update(readState()) };
  },
});
