/* The scheduler, played. State → kvlab.serving_sim_figure in Pyodide → kit.bind fills the sentences,
 * the table and the KV line; the chats x time raster is the build's SVG redrawn in place (kit.raster, the view's runs and tooltips). */
kvlab.register("serving-sim", {
  mount(root, ctx) {
    const raster = root.querySelector(".kv-sim-raster");
    return ctx.form("serving_sim_figure", {
      draw(data) {
        kvlab.kit.raster(raster, data.view.raster, { prefix: "kv-sim" });
      },
    });
  },
});
