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

    function syncKvOptions() {
      const engine = form.engine.value;
      for (const opt of form.kv.options) opt.disabled = !opt.dataset.modes.split(" ").includes(engine);
      if (form.kv.selectedOptions[0].disabled) form.kv.value = "f16";
      // vLLM's own settings: llama.cpp has no such flags, so they are off (Python ignores them there)
      form.gpu_memory_utilization.disabled = form.block_size.disabled = engine !== "vllm";
    }

    function readState(ev) {
      syncKvOptions();
      // the slider picks one of Python's context steps; a typed number goes as typed (Python clamps it)
      if (ev && ev.target === form.context_step) form.context.value = steps[parseInt(form.context_step.value, 10)];
      form["batch-out"].value = form.batch.value;
      const context = parseInt(form.context.value, 10);
      const batch = parseInt(form.batch.value, 10);
      const answer = parseInt(form.answer.value, 10);
      const util = parseFloat(form.gpu_memory_utilization.value);
      return {
        model: form.model.value,
        gpu: form.gpu.value,
        context: Number.isFinite(context) ? context : data.params.context,
        batch: Number.isFinite(batch) ? batch : 1,
        weights: form.weights.value,
        kv: form.kv.value,
        engine: form.engine.value,
        answer: Number.isFinite(answer) ? answer : data.params.answer,
        gpu_memory_utilization: Number.isFinite(util) ? util : data.params.gpu_memory_utilization,
        block_size: parseInt(form.block_size.value, 10),
      };
    }

    const compute = ctx.live(
      "serving_figure",
      async (result) => {
        data = result;
        ctx.reportClamped(data, {
          context: "context", batch: "batch", answer: "answer tokens",
          gpu_memory_utilization: "vLLM's share of GPU memory", block_size: "block size",
        });
        form.context.value = data.params.context;
        form.context_step.value = data.context_step;
        form.context_step.setAttribute("aria-valuetext", data.context_text);
        form.answer.value = data.params.answer;
        form.batch.value = data.params.batch;
        form["batch-out"].value = data.params.batch;
        form.gpu_memory_utilization.value = data.params.gpu_memory_utilization;
        form.block_size.value = data.params.block_size;
        await render();
      },
      (data) => data.status
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
      set("bandwidth", g.bandwidth_text);
      set("batch", data.batch_text);
      set("context", data.context_text);
      set("verdict", data.verdict);
      field("verdict").dataset.fits = String(data.fits);
      set("headline", data.headline);
      field("context-flag").hidden = !data.context_flag;
      set("context-flag", data.context_flag ? data.context_flag.message : "");
      set("working", data.working);
      set("ms", data.ms_per_token_text);
      set("bound", data.bound_text);
      set("efficiency", data.efficiency_text);
      set("bounds", data.bounds_text);
      field("notes").replaceChildren(...data.notes.map((n) => el("li", n)));
      set("cost-roofline", data.cost_roofline_text);
      set("prefill", data.prefill_text);
      set("mix", data.mix_text);
      set("budget", data.budget.human, data.budget.exact);
      set("flags", data.flags);
      set("ms1", data.ms_per_token_batch1_text);
      set("tps-chat", data.tokens_per_second_per_chat_text);
      set("tps-total", data.total_tokens_per_second_text);
      set("kv-share", data.kv_share_text);
      set("kv-share1", data.kv_share_batch1_text);
      set("kv-chat", data.kv_per_chat.human, data.kv_per_chat.exact);
      set("weights-bytes", data.weights_bytes.human, data.weights_bytes.exact);
      set("chats", data.chats_that_fit_text);
      set("memory-used", data.memory_used.human, data.memory_used.exact);
      set("cost", data.cost_text);
      set("cost1", data.cost_batch1_text);
      const price = field("price");
      price.replaceChildren(g.price_label);
      if (g.price_source) price.append(" ", el("a", "Source", { href: g.price_source, rel: "noopener" }), ".");
      field("same-kind-box").hidden = !data.same_kind.length;
      set("price-kind", g.price_kind || "");
      field("same-kind").tBodies[0].replaceChildren(
        ...data.same_kind.map((row) => {
          const tr = el("tr");
          tr.append(el("th", row.name, { scope: "row" }), el("td", row.price), el("td", row.cost_text));
          return tr;
        })
      );
      set("curve-batch", data.curve.batch);
      field("curve").tBodies[0].replaceChildren(
        ...data.curve.contexts.map((c, i) => {
          const tr = el("tr");
          tr.append(el("th", c.toLocaleString("en-US"), { scope: "row" }), el("td", data.curve.ms_batch1_text[i]),
            el("td", data.curve.ms_batch_text[i]));
          return tr;
        })
      );
      field("assumptions").replaceChildren(...data.assumptions.map((a) => {
        const li = el("li");
        li.append(...kvlab.kit.linked(a)); // a source's web address becomes a link named by its site
        return li;
      }));
    }

    async function render() {
      renderText();
      const ticks = data.options.context_ticks;
      const c = data.curve;
      // where a batch does not fit, Python gives no time (null): the line stops there
      const traces = [
        { name: "batch 1", y: c.ms_batch1, color: "#5c6bc0" },
        { name: `batch ${c.batch}`, y: c.ms_batch, color: "#ef6c00" },
      ].map((t) => ({
        type: "scatter", mode: "lines+markers", name: t.name, x: c.contexts, y: t.y,
        line: { color: t.color, width: 2.5 }, marker: { size: 5 },
        hovertemplate: "%{x:,} tokens: %{y:.2f} ms/token<extra>" + t.name + "</extra>",
      }));
      await kvlab.kit.plot(
        root,
        plot,
        traces,
        {
          margin: { l: 60, r: 10, t: 10, b: 50 },
          height: 340,
          xaxis: { type: "log", title: { text: "context per chat (tokens, log scale)" }, tickvals: ticks.values, ticktext: ticks.labels },
          yaxis: { title: { text: "ms per token (roofline)" }, rangemode: "tozero" },
          legend: { orientation: "h", y: -0.25 },
          shapes: [{ type: "line", xref: "x", yref: "paper", x0: data.params.context, x1: data.params.context, y0: 0, y1: 1,
            line: { color: kvlab.kit.TEXT, width: 1, dash: "dash" } }],
        }
      );
    }

    form.addEventListener("input", (ev) => update(readState(ev)));
    syncKvOptions();
    return { activate: () => update(readState()) };
  },
});
