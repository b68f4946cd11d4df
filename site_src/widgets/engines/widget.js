/* Four engines, one model. State → kvlab.engines_figure in Pyodide → kit.bind fills the headline,
 * the bars, the table and the rules; every number and sentence is Python's. */
kvlab.register("engines", {
  mount(root, ctx) {
    return ctx.form("engines_figure", {
      sync: true,
    });
  },
});
