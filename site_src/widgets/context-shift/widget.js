/* llama.cpp running out of context. State → kvlab.context_shift_figure in Pyodide → kit.bind fills
 * the template's readout, shifts, server line and step table from Python's result. The raster is
 * the build's SVG, redrawn in place (kvlab.kit.raster): no chart library. */
kvlab.register("context-shift", {
  mount(root, ctx) {
    const raster = root.querySelector(".kv-static-raster");
    const details = root.querySelector(".kv-numbers");
    return ctx.form("context_shift_figure", {
      draw(data) {
        const cells = data.view.cells;
        // a shift at step s: a line between rows s - 1 and s (in the gap between them)
        kvlab.kit.raster(raster, data.grid, {
          prefix: "kv-cs",
          lines: data.shifts.map((s) => ({ y: s.step - 0.05, className: "kv-raster-shift" })),
          title: (row, first, last, v) => `step ${row}, ${first === last ? `text token ${first}` : `text tokens ${first}–${last}`}: ${cells[v]}`,
        });
        details.open = false;
      },
    });
  },
});
