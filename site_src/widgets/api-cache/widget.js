/* Prompt caching on the API. State → kvlab.api_cache_figure in Pyodide → kit.bind fills the
 * template's sentences and tables from Python's result; JS reads the form and draws the curve
 * (cost per request against requests per hour, per vendor). */
kvlab.register("api-cache", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const form = root.querySelector("form.kv-controls");
    const plot = root.querySelector(".kv-plot");
    const COLORS = { anthropic: "#d84315", openai: "#2e7d32", google: "#1e88e5" };

    function drawCurve(data) {
      const c = data.curve;
      const traces = [];
      const hover = data.view.hover; // one line per point, from Python: per vendor, cached then not cached
      const names = data.view.curve_heads; // per vendor: "<model>, cached", "<model>, not cached"
      c.series.forEach((s, i) => {
        const color = COLORS[s.vendor];
        traces.push(
          { type: "scatter", mode: "lines+markers", name: names[2 * i], x: c.rates, y: s.cached, hovertext: hover[2 * i],
            line: { color, width: 2.5 }, marker: { size: 5 }, hovertemplate: "%{hovertext}<extra>" + names[2 * i] + "</extra>" },
          { type: "scatter", mode: "lines", name: names[2 * i + 1], x: c.rates, y: s.uncached, hovertext: hover[2 * i + 1],
            line: { color, width: 1.5, dash: "dot" }, hovertemplate: "%{hovertext}<extra>" + s.name + "</extra>" }
        );
      });
      return kit.plot(root, plot, traces, {
        margin: { l: 60, r: 10, t: 10, b: 50 },
        height: 360,
        xaxis: { type: "log", title: { text: "requests per hour (log scale)" }, tickvals: c.ticks.values, ticktext: c.ticks.labels },
        yaxis: { type: "log", title: { text: "USD per request (log scale)" }, dtick: 1, tickprefix: "$" },
        legend: { orientation: "h", y: -0.3 },
        shapes: [{ type: "line", xref: "x", yref: "paper", x0: data.params.requests_per_hour, x1: data.params.requests_per_hour,
          y0: 0, y1: 1, line: { color: kit.TEXT, width: 1, dash: "dash" } }],
      });
    }

    return ctx.form("api_cache_figure", {
      draw(data) {
        form.ttl.disabled = !data.ttl_applies;
        return drawCurve(data);
      },
    });
  },
});
