/* Does it fit? State → kvlab.gpu_fit_figure in Pyodide → render.
 * The bar widths, sizes, verdict and every sentence come from Python; kit.bind fills the template. */
kvlab.register("gpu-fit", {
  mount(root, ctx) {
    const form = root.querySelector("form.kv-controls");
    const steps = ctx.data.options.context_steps;

    function syncKvOptions() {
      const mode = form.mode.value;
      for (const opt of form.kv.options) opt.disabled = !opt.dataset.modes.split(" ").includes(mode);
      if (form.kv.selectedOptions[0].disabled) form.kv.value = mode === "vllm" ? "fp8" : "q8_0";
      // vLLM's own settings: llama.cpp has no such flags, so they are off (Python ignores them there)
      form.gpu_memory_utilization.disabled = form.block_size.disabled = form.pipeline_parallel.disabled = mode !== "vllm";
    }

    syncKvOptions();
    return ctx.form("gpu_fit_figure", {
      read(ev, data) {
        syncKvOptions();
        // the slider picks one of Python's context steps; a typed number goes as typed (Python clamps it)
        if (ev && ev.target === form.context_step) form.context.value = steps[parseInt(form.context_step.value, 10)];
        return kvlab.kit.readForm(form, data.params);
      },
      sync: (data) => ({ ...data.params, context_step: data.context_step }),
    });
  },
});
