/* llama.cpp running out of context. State → kvlab.context_shift_view in Pyodide → kit.bind fills
 * the template's readout, shifts, server line and step table from Python's result. The raster is
 * the build's SVG, redrawn in place (kvlab.kit.raster): no chart library. */
kvlab.register("context-shift", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const raster = root.querySelector(".kv-static-raster");
    const details = root.querySelector(".kv-numbers");
    const RANGES = ["n_ctx", "prompt_len", "n_generate"];
    const showRanges = () => RANGES.forEach((k) => (form[`${k}-out`].value = form[k].value));
    let data = ctx.data;

    // latest input wins (ctx.live): Python clamps out-of-range input, so show what was really computed
    const compute = ctx.live(
      "context_shift_view",
      (result) => {
        data = result;
        showRanges();
        kvlab.kit.bind(root, data);
        const cells = data.view.cells;
        // a shift at step s: a line between rows s - 1 and s (in the gap between them)
        kvlab.kit.raster(raster, data.grid, {
          prefix: "kv-cs",
          lines: data.shifts.map((s) => ({ y: s.step - 0.05, className: "kv-raster-shift" })),
          title: (row, first, last, v) => `step ${row}, ${first === last ? `text token ${first}` : `text tokens ${first}–${last}`}: ${cells[v]}`,
        });
        details.open = false;
      },
      (data) => `Computed in your browser by kvlab.context_shift_view (n_ctx = ${data.n_ctx}, ${data.mode}).`
    );
    const update = () => {
      showRanges();
      return compute(kvlab.kit.readForm(form, data.params));
    };

    form.addEventListener("input", update);
    return { activate: () => update() };
  },
});
