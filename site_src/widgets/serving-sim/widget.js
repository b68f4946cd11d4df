/* The scheduler, played. State → kvlab.serving_sim_figure in Pyodide → kit.bind fills the sentences,
 * the table and the KV line; the chats x time raster is the build's SVG redrawn in place (kit.raster). */
kvlab.register("serving-sim", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const raster = root.querySelector(".kv-sim-raster");
    const RANGES = ["users", "input_len", "output_len", "num_prompts"];
    const showRanges = () => RANGES.forEach((k) => (form[`${k}-out`].value = form[k].value));
    let data = ctx.data;

    const compute = ctx.live(
      "serving_sim_figure",
      (result) => {
        data = result;
        showRanges();
        kvlab.kit.bind(root, data);
        const states = data.states;
        kvlab.kit.raster(raster, data.grid, {
          prefix: "kv-sim",
          title: (row, first, last, v) => `chat ${data.rows[row] + 1}: ${states[v]}`,
        });
      },
      (data) => `Computed in your browser by kvlab.serving_sim_figure (${data.params.num_prompts} chats, ${data.params.users} at a time).`
    );
    const update = () => {
      showRanges();
      return compute(kvlab.kit.readForm(form, data.params));
    };
    form.addEventListener("input", update);
    return { activate: () => update() };
  },
});
