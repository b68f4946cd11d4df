/* llama.cpp running out of context. State → kvlab.context_shift_figure in Pyodide → kit.bind fills
 * the template's readout, shifts, server line and step table from Python's result. The raster is
 * the build's SVG, redrawn in place by kvlab.kit.raster from the view's runs and tooltips: no chart library. */
kvlab.register("context-shift", {
  mount(root, ctx) {
    const raster = root.querySelector(".kv-static-raster");
    const details = root.querySelector(".kv-numbers");
    return ctx.form("context_shift_figure", {
      draw(data) {
        // a shift at step s: a line between rows s - 1 and s (in the gap between them)
        kvlab.kit.raster(raster, data.view.raster, {
          prefix: "kv-cs",
          lines: data.shifts.map((s) => ({ y: s.step - 0.05, className: "kv-raster-shift" })),
        });
        details.open = false;
      },
    });
  },
});
