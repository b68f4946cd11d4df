/* The trade-off map: three settings → kvlab.tradeoff_map_figure in Pyodide → kit.bind fills the
 * grid, the reasons (in numbers, from kvlab's calculators) and the llama-server line. A grid
 * cell is a button: it picks that length and repetition. */
kvlab.register("tradeoff-map", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const loop = ctx.form("tradeoff_map_figure", {
      read: () => kvlab.kit.readForm(form, ctx.data.params),
    });
    root.querySelector('[data-field="grid"]').addEventListener("click", (ev) => {
      const b = ev.target.closest(".kv-tm-cell");
      if (!b) return;
      kvlab.kit.writeForm(form, { length: b.dataset.length, repetition: b.dataset.repetition });
      loop.update();
    });
    return loop;
  },
});
