/* Attention on a sentence. State → kvlab.attention_figure in Pyodide → kit.bind fills the
 * template's table and readout from Python's result (every number formatted there); JS draws
 * the heatmap and picks which query token's readout (a data-bind-scope) is shown. */
kvlab.register("attention", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const form = root.querySelector(".kv-controls");
    const plot = root.querySelector(".kv-plot");
    const details = root.querySelector(".kv-numbers");
    const querySelect = root.querySelector("select[name=query]");
    const readout = root.querySelector('[data-bind-scope="view.readout"]');
    let query = ctx.data.tokens.length - 1;

    const loop = ctx.form("attention_figure", {
      read: (ev, data) => kit.readForm(form, { d: data.d, temperature: data.temperature, seed: 0, causal: data.causal }),
      echo: { temperature: (v) => Number(v).toFixed(1) }, // the control's own value, echoed
      sync: (data) => ({ seed: data.seed }), // Python clamps out-of-range input: show what was computed (kit: not while the reader types)
      draw(data) {
        showQuery(query);
        // the heatmap (kit.heatmap: no chart library); a click on a cell reads its query row
        kit.heatmap(plot, {
          // future keys under the causal mask are not "weight 0": they don't exist yet
          z: data.weights.map((row, i) => row.map((w, j) => (data.causal && j > i ? null : w))),
          x: data.tokens,
          y: data.tokens,
          xTitle: "key (what is read)",
          yTitle: "query",
          title: (i, j) => data.view.hover[i][j],
          onCell: showQuery,
        });
        details.open = false;
      },
    });

    function showQuery(q) {
      query = q;
      querySelect.value = String(q);
      kit.bind(readout, loop.data.view.readouts[q]);
    }

    querySelect.addEventListener("change", () => showQuery(parseInt(querySelect.value, 10)));
    return loop;
  },
});
