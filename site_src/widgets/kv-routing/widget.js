/* KV-aware routing. State → kvlab.kv_routing_figure in Pyodide (a seeded simulation) → render.
 * Every number and sentence come from Python (kit.bind fills the template); JS draws the chart:
 * each policy's cumulative hit rate over the trace, with the ceiling. */
kvlab.register("kv-routing", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const form = root.querySelector("form.kv-controls");
    const plot = root.querySelector(".kv-plot");
    const COLORS = ["#ef6c00", "#5c6bc0", "#2e7d32"];

    async function render(data) {
      const c = data.curve;
      const traces = c.series.map((s, i) => ({
        type: "scatter", mode: "lines", name: s.label, x: c.requests, y: s.percent,
        line: { color: COLORS[i % COLORS.length], width: 2.5 },
        hovertext: data.view.hover[i], hovertemplate: "%{hovertext}<extra>" + s.label + "</extra>",
      }));
      await kit.plot(root, plot, traces, {
        margin: { l: 60, r: 10, t: 10, b: 50 },
        height: 340,
        xaxis: { title: { text: "requests so far" }, rangemode: "tozero" },
        yaxis: { title: { text: "prompt tokens reused (%)" }, range: [0, 100] },
        legend: { orientation: "h", y: -0.25 },
        shapes: [{ type: "line", xref: "paper", yref: "y", x0: 0, x1: 1, y0: c.ceiling_percent, y1: c.ceiling_percent,
          line: { color: kit.TEXT, width: 1, dash: "dash" } }],
        annotations: [{ xref: "paper", yref: "y", x: 0, y: c.ceiling_percent, xanchor: "left", yanchor: "bottom",
          text: data.view.ceiling_label, showarrow: false }],
      });
    }

    // parameters the form lacks (an embed's prefix_tokens, own_tokens) keep their values
    return ctx.form("kv_routing_figure", {
      read: (ev, data) => ({ ...data.params, ...kit.readForm(form, data.params) }),
      sync: true,
      draw: render,
    });
  },
});
