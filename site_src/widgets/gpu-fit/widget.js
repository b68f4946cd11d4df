/* Does it fit? State → kvlab.gpu_fit_figure in Pyodide → render.
 * The bar widths, sizes and verdict all come from Python; JS handles input and draws. */
kvlab.register("gpu-fit", {
  mount(root, ctx) {
    const form = root.querySelector("form.kv-controls");
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const steps = ctx.data.options.context_steps;

    let data = ctx.data;

    const el = (tag, text, attrs) => {
      const e = document.createElement(tag);
      if (text !== undefined && text !== null) e.textContent = text;
      Object.entries(attrs || {}).forEach(([k, v]) => (k === "style" ? (e.style.cssText = v) : e.setAttribute(k, v)));
      return e;
    };
    const row = (cells, attrs) => {
      const tr = el("tr", null, attrs);
      tr.append(...cells);
      return tr;
    };
    const th = (text) => el("th", text, { scope: "row" });

    function syncKvOptions() {
      const mode = form.mode.value;
      for (const opt of form.kv.options) opt.disabled = !opt.dataset.modes.split(" ").includes(mode);
      if (form.kv.selectedOptions[0].disabled) form.kv.value = mode === "vllm" ? "fp8" : "q8_0";
      // vLLM's own settings: llama.cpp has no such flags, so they are off (Python ignores them there)
      form.gpu_memory_utilization.disabled = form.block_size.disabled = mode !== "vllm";
    }

    function readState(ev) {
      syncKvOptions();
      // the slider picks one of Python's context steps; a typed number goes as typed (Python clamps it)
      if (ev && ev.target === form.context_step) form.context.value = steps[parseInt(form.context_step.value, 10)];
      const context = parseInt(form.context.value, 10);
      const n = parseInt(form.n_seq.value, 10);
      const util = parseFloat(form.gpu_memory_utilization.value);
      return {
        model: form.model.value,
        gpu: form.gpu.value,
        weights: form.weights.value,
        kv: form.kv.value,
        context: Number.isFinite(context) ? context : data.params.context,
        mode: form.mode.value,
        n_seq: Number.isFinite(n) ? n : 1,
        n_gpus: parseInt(form.n_gpus.value, 10),
        gpu_memory_utilization: Number.isFinite(util) ? util : data.params.gpu_memory_utilization,
        block_size: parseInt(form.block_size.value, 10),
      };
    }

    const compute = ctx.live(
      "gpu_fit_figure",
      async (result) => {
        data = result;
        ctx.reportClamped(data, {
          context: "context", n_seq: "sequences", n_gpus: "GPUs",
          gpu_memory_utilization: "vLLM's share of GPU memory", block_size: "block size",
        });
        form.context.value = data.params.context;
        form.context_step.value = data.context_step;
        form.context_step.setAttribute("aria-valuetext", data.context_text);
        form.n_gpus.value = data.params.n_gpus;
        form.n_seq.value = data.params.n_seq;
        form.gpu_memory_utilization.value = data.params.gpu_memory_utilization;
        form.block_size.value = data.params.block_size;
        render();
      },
      (data) => data.status
    );
    function update(args) {
      return compute(args);
    }

    function render() {
      const set = (name, text, title) => {
        const e = field(name);
        e.textContent = text;
        if (title !== undefined) e.title = title;
      };
      set("model", data.model_info.hf_id);
      set("gpu", data.where);
      set("weights", data.params.weights);
      set("kv", data.params.kv);
      set("sequences", data.sequences_text);
      set("sequences2", data.sequences_text);
      set("context", data.context_text);
      set("context3", data.context_text);
      set("verdict", data.verdict);
      field("verdict").dataset.fits = String(data.fits);
      set("headline", data.headline);
      set("engine-text", data.engine_text);
      field("context-flag").hidden = !data.context_flag;
      set("context-flag", data.context_flag ? data.context_flag.message : "");
      set("max-context", data.max_context_text);
      set("max-sequences", data.max_sequences_text);
      set("flags", data.flags);

      const limitLabel = data.budget_label;
      const bar = field("bar");
      bar.replaceChildren(
        ...data.segments.map((s) => el("span", null, { class: `kv-seg kv-seg-${s.name}`, style: `width: ${s.percent}%`, title: `${s.label}: ${s.human} (${s.exact})` })),
        el("span", null, { class: "kv-bar-limit", "data-field": "limit", style: `left: ${data.budget_percent}%`, title: `${limitLabel}: ${data.budget.human}` })
      );
      bar.setAttribute("aria-label", data.segments.map((s) => `${s.label} ${s.human}, `).join("") + `against ${data.memory.human} of GPU memory`);
      field("legend").replaceChildren(
        ...data.segments.map((s) => {
          const li = el("li");
          li.append(el("span", null, { class: `kv-swatch kv-seg-${s.name}` }), `${s.label}: `, el("strong", s.human, { title: s.exact }));
          return li;
        }),
        (() => {
          const li = el("li");
          li.append(el("span", null, { class: "kv-swatch kv-swatch-limit" }), `${limitLabel}: `, el("strong", data.budget.human, { title: data.budget.exact }));
          return li;
        })()
      );
      field("segments").tBodies[0].replaceChildren(
        ...data.segments.map((s) => row([th(s.label), el("td", s.human), el("td", s.exact), el("td", s.how)])),
        row([th(data.per_gpu ? "total per GPU" : "total"), el("td", data.total.human), el("td", data.total.exact), el("td", `${data.verdict} (${data.budget.human} available)`)], { class: "kv-total" })
      );
      field("log-box").hidden = !data.log_lines.length;
      set("log", data.log_lines.join("\n"));
      set("flags2", `${data.flags} -ctk ${data.params.kv} -ctv ${data.params.kv}`);
      field("model-note").hidden = data.model_info.confirmed;
      set("model-note", data.model_info.confirmed ? "" : `Not confirmed: ${data.model_info.note}`);
      field("assumptions").replaceChildren(...data.assumptions.map((a) => {
        const li = el("li");
        li.append(...kvlab.kit.linked(a)); // a source's web address becomes a link named by its site
        return li;
      }));
      field("gpus").tBodies[0].replaceChildren(
        ...data.gpus.map((g) =>
          row([th(g.name), el("td", g.memory.human, { title: g.memory.exact }), el("td", g.verdict),
            el("td", g.headroom.human, { title: g.headroom.exact }), el("td", g.max_context), el("td", g.max_sequences)], { "data-fits": String(g.fits) })
        )
      );
    }

    form.addEventListener("input", (ev) => update(readState(ev)));
    syncKvOptions();
    return { activate: () => update(readState()) };
  },
});
