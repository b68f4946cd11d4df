/* Four engines, one model. State → kvlab.engines_figure in Pyodide → kit.bind fills the headline,
 * the bars, the table and the rules; every number and sentence is Python's. */
kvlab.register("engines", {
  mount(root, ctx) {
    return ctx.form("engines_figure", {
      sync: true,
      describe: (d) => `Computed in your browser by kvlab.engines_figure (${d.params.context.toLocaleString("en")} tokens, ${d.params.n_gpus} GPU${d.params.n_gpus > 1 ? "s" : ""}).`,
    });
  },
});
