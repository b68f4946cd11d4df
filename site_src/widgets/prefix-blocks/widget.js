/* Two requests sharing a prefix, cut into blocks. State → kvlab.prefix_blocks in Pyodide →
 * kit.bind fills the template's block rows and sentence from Python's result. */
kvlab.register("prefix-blocks", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    let data = ctx.data;

    // latest input wins (ctx.live): Python clamps out-of-range input, so show what was really computed
    const compute = ctx.live(
      "prefix_blocks",
      (result) => {
        data = result;
        form["prefix_len-out"].value = data.params.prefix_len;
        kvlab.kit.bind(root, data);
      },
      (data) => `Computed in your browser by kvlab.prefix_blocks (block size ${data.params.block_size}).`
    );
    const update = () => {
      form["prefix_len-out"].value = form.prefix_len.value;
      return compute(kvlab.kit.readForm(form, data.params));
    };

    form.addEventListener("input", update);
    return { activate: () => update() };
  },
});
