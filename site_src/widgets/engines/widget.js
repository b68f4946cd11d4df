/* Four engines, one model. State → kvlab.engines_figure in Pyodide → kit.bind fills the headline,
 * the bars, the table and the rules; every number and sentence is Python's. */
kvlab.register("engines", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const form = root.querySelector("form.kv-controls");
    let data = ctx.data;
    const compute = ctx.live(
      "engines_figure",
      (result) => {
        data = result;
        kit.writeForm(form, data.params);
        kit.bind(root, data);
      },
      (d) => `Computed in your browser by kvlab.engines_figure (${d.params.context.toLocaleString("en")} tokens, ${d.params.n_gpus} GPU${d.params.n_gpus > 1 ? "s" : ""}).`
    );
    form.addEventListener("input", () => compute(kit.readForm(form, data.params)));
    return { activate: () => compute(kit.readForm(form, data.params)) };
  },
});
