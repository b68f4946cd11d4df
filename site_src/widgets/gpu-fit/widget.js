/* Does it fit? State → kvlab.gpu_fit_figure in Pyodide → render.
 * The bar widths, sizes, verdict and every sentence come from Python; kit.bind fills the template. */
kvlab.register("gpu-fit", {
  mount(root, ctx) {
    const form = root.querySelector("form.kv-controls");
    const steps = ctx.data.options.context_steps;
    const share = form.gpu_memory_utilization;

    // vLLM's default --gpu-memory-utilization depends on its version (Python's list: 0.92 from 0.20, 0.9 before).
    // The field follows the version picked until it is the reader's: typed in, or set by a link to a value
    // other than that version's default. What the reader set is never rewritten.
    const defaultShare = () => {
      const version = ctx.data.options.vllm_versions.find((v) => v.id === form.engine_version.value);
      return version ? version.gpu_memory_utilization : null;
    };
    const linked = new URLSearchParams(location.search).has(
      root.dataset.embed === "true" ? share.name : kvlab.widgetKey(root) + "." + share.name
    );
    let readersShare = linked && Number(share.value) !== defaultShare();

    function followVersion(ev) {
      if (ev && ev.target === share) readersShare = true;
      if (!readersShare) kvlab.kit.writeForm(form, { gpu_memory_utilization: defaultShare() });
    }

    function syncKvOptions() {
      const mode = form.mode.value;
      for (const opt of form.kv.options) opt.disabled = !opt.dataset.modes.split(" ").includes(mode);
      if (form.kv.selectedOptions[0].disabled) form.kv.value = mode === "vllm" ? "fp8" : "q8_0";
      // vLLM's own settings: llama.cpp has no such flags, so they are off (Python ignores them there)
      form.engine_version.disabled = form.gpu_memory_utilization.disabled = form.block_size.disabled = form.pipeline_parallel.disabled = mode !== "vllm";
    }

    syncKvOptions();
    followVersion(null); // a link that names only the version: its default share, before the figure goes live
    return ctx.form("gpu_fit_figure", {
      read(ev, data) {
        syncKvOptions();
        followVersion(ev);
        // the slider picks one of Python's context steps; a typed number goes as typed (Python clamps it)
        if (ev && ev.target === form.context_step) form.context.value = steps[parseInt(form.context_step.value, 10)];
        return kvlab.kit.readForm(form, data.params);
      },
      sync: (data) => ({ ...data.params, context_step: data.context_step }),
    });
  },
});
