/* Disaggregated prefill. State → kvlab.pd_transfer_figure in Pyodide → render.
 * Every number and sentence come from Python (kit.bind fills the template); JS draws the chart:
 * prefill time and each link's transfer time against prompt length. */
kvlab.register("pd-transfer", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const plot = root.querySelector(".kv-plot");
    const COLORS = ["#2e7d32", "#5c6bc0", "#00897b", "#8e24aa", "#ef6c00", "#c62828", "#6d4c41"];

    async function render(data) {
      const c = data.curve;
      const traces = [
        { type: "scatter", mode: "lines+markers", name: "prefill (compute roofline)", x: c.prompts, y: c.prefill_ms,
          line: { color: kit.TEXT, width: 3 }, marker: { size: 5 }, hovertext: data.view.hover.prefill, hovertemplate: "%{hovertext}<extra>prefill</extra>" },
        ...c.links.map((l, i) => ({
          type: "scatter", mode: "lines", name: l.name, x: c.prompts, y: l.ms,
          line: { color: COLORS[i % COLORS.length], width: l.id === data.params.link ? 3 : 1.5, dash: l.id === data.params.link ? "solid" : "dot" },
          hovertext: data.view.hover.links[i], hovertemplate: "%{hovertext}<extra>" + l.name + "</extra>",
        })),
      ];
      // a phone's width puts the eight legend entries on as many rows: room below the axis for them
      const narrow = plot.clientWidth < 560;
      await kit.plot(root, plot, traces, {
        margin: { l: 60, r: 10, t: 10, b: 50 },
        height: narrow ? 560 : 400,
        xaxis: { type: "log", title: { text: "prompt tokens (log scale)" }, tickvals: c.prompts, ticktext: c.labels },
        yaxis: { type: "log", title: { text: "ms (log scale)" } },
        legend: { orientation: "h", x: 0, xanchor: "left", y: narrow ? -0.18 : -0.22, yanchor: "top" },
        shapes: [{ type: "line", xref: "x", yref: "paper", x0: data.params.prompt_tokens, x1: data.params.prompt_tokens, y0: 0, y1: 1,
          line: { color: kit.TEXT, width: 1, dash: "dash" } }],
      });
    }

    return ctx.form("pd_transfer_figure", { sync: true, draw: render });
  },
});
