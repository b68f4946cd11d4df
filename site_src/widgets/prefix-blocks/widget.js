/* Two requests sharing a prefix, cut into blocks. State → kvlab.prefix_blocks_figure in Pyodide →
 * kit.bind fills the template's block rows and sentence (and the slider's readout: the length
 * Python used) from Python's result. */
kvlab.register("prefix-blocks", {
  mount(root, ctx) {
    return ctx.form("prefix_blocks_figure", {
    });
  },
});
