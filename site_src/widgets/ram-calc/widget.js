/* The RAM calculator. State → kvlab.ram_calc_figure in Pyodide → kit.bind fills the template.
 * Every number and sentence comes from Python; JS keeps the log-scale slider and the typed
 * --ctx-size in step (the slider picks one of Python's steps; a typed number goes as typed). */
kvlab.register("ram-calc", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const form = root.querySelector("form.kv-controls");
    const steps = ctx.data.options.ctx_steps;

    return ctx.form("ram_calc_figure", {
      read(ev, data) {
        if (ev && ev.target === form.ctx_step) form.ctx_size.value = steps[Number(form.ctx_step.value)];
        const { ctx_step, ...args } = kit.readForm(form, { ...data.params, ctx_step: 0 });
        return args;
      },
      sync(data) {
        const at = steps.indexOf(data.params.ctx_size);
        return { ...data.params, ...(at >= 0 ? { ctx_step: at } : {}) };
      },
    });
  },
});
