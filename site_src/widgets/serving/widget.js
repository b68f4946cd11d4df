/* Decode speed and cost. State → kvlab.serving_figure in Pyodide → render.
 * Every number and its text come from Python (kit.bind fills the template); JS draws the chart. */
kvlab.register("serving", {
  mount(root, ctx) {
    const form = root.querySelector("form.kv-controls");
    const plot = root.querySelector(".kv-plot");
    const steps = ctx.data.options.context_steps;

    function syncKvOptions() {
      const engine = form.engine.value;
      for (const opt of form.kv.options) opt.disabled = !opt.dataset.modes.split(" ").includes(engine);
      if (form.kv.selectedOptions[0].disabled) form.kv.value = "f16";
      // vLLM's own settings: llama.cpp has no such flags, so they are off (Python ignores them there)
      form.gpu_memory_utilization.disabled = form.block_size.disabled = engine !== "vllm";
    }

    async function render(data) {
      const ticks = data.options.context_ticks;
      const c = data.curve;
      // where a batch does not fit, Python gives no time (null): the line stops there
      const traces = [
        { name: data.view.legend.ms_batch1, y: c.ms_batch1, hover: data.view.hover.ms_batch1, color: "#5c6bc0" },
        { name: data.view.legend.ms_batch, y: c.ms_batch, hover: data.view.hover.ms_batch, color: "#ef6c00" },
      ].map((t) => ({
        type: "scatter", mode: "lines+markers", name: t.name, x: c.contexts, y: t.y,
        line: { color: t.color, width: 2.5 }, marker: { size: 5 },
        hovertext: t.hover, hovertemplate: "%{hovertext}", // the trace's name in the side box
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

    syncKvOptions();
    return ctx.form("serving_figure", {
      read(ev, data) {
        syncKvOptions();
        // the slider picks one of Python's context steps; a typed number goes as typed (Python clamps it)
        if (ev && ev.target === form.context_step) form.context.value = steps[parseInt(form.context_step.value, 10)];
        return kvlab.kit.readForm(form, data.params);
      },
      sync: (data) => ({ ...data.params, context_step: data.context_step }),
      draw: render,
    });
  },
});
