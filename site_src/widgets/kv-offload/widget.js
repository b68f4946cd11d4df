/* KV offload tiers. State → kvlab.kv_offload_figure in Pyodide → render.
 * Every number and sentence come from Python (kit.bind fills the template); JS reads the form
 * and draws the chart: load time per tier and prefill time against prefix length. */
kvlab.register("kv-offload", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const plot = root.querySelector(".kv-plot");
    const COLORS = { dram: "#1e88e5", nvme: "#ef6c00", remote: "#8e24aa" };

    async function render(data) {
      const c = data.curve;
      const hover = data.view.hover; // one line per point, from Python (kv_offload_view)
      const traces = [
        { type: "scatter", mode: "lines+markers", name: "prefill again", x: c.tokens, y: c.recompute, hovertext: hover.recompute,
          line: { color: kit.TEXT, width: 2.5 }, marker: { size: 5 }, hovertemplate: "%{hovertext}<extra>prefill again</extra>" },
      ];
      c.series.forEach((s, i) => {
        traces.push({ type: "scatter", mode: "lines", name: s.name, x: c.tokens, y: s.load, hovertext: hover.series[i],
          line: { color: COLORS[s.tier], width: 2, dash: s.tier === "dram" ? "solid" : s.tier === "nvme" ? "dash" : "dot" },
          hovertemplate: "%{hovertext}<extra>" + s.name + "</extra>" });
      });
      const marks = c.series.filter((s) => s.crossover !== null && s.crossover >= c.tokens[0]); // as hover.crossover
      if (marks.length) {
        traces.push({ type: "scatter", mode: "markers", name: "crossover", x: marks.map((s) => s.crossover),
          y: marks.map((s) => s.crossover_seconds), hovertext: hover.crossover,
          marker: { size: 11, symbol: "diamond", color: marks.map((s) => COLORS[s.tier]), line: { color: kit.TEXT, width: 1 } },
          hovertemplate: "%{hovertext}<extra></extra>" });
      }
      await kit.plot(root, plot, traces, {
        margin: { l: 60, r: 10, t: 10, b: 50 },
        height: 380,
        xaxis: { type: "log", title: { text: "prefix length (tokens, log scale)" }, tickvals: c.ticks.values, ticktext: c.ticks.labels },
        yaxis: { type: "log", title: { text: "seconds (log scale)" } },
        legend: { orientation: "h", y: -0.3 },
        shapes: [{ type: "line", xref: "x", yref: "paper", x0: data.params.prefix_tokens, x1: data.params.prefix_tokens,
          y0: 0, y1: 1, line: { color: kit.TEXT, width: 1, dash: "dash" } }],
      });
    }

    return ctx.form("kv_offload_figure", { sync: true, draw: render });
  },
});
