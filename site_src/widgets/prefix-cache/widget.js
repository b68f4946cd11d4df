/* One system prompt, many requests. State → kvlab.prefix_cache_figure in Pyodide → kit.bind
 * fills the template's sentence and tables from Python's result; JS draws the chart. */
kvlab.register("prefix-cache", {
  mount(root, ctx) {
    const plot = root.querySelector(".kv-plot");

    return ctx.form("prefix_cache_figure", {
      async draw(data) {
        const line = (name, key, color, dash) => ({
          type: "scatter", mode: "lines", name, x: data.requests, y: data[key].cumulative_computed, line: { color, width: 2.5, dash },
          hovertext: data.view.hover[key], hovertemplate: "%{hovertext}<extra>" + name + "</extra>",
        });
        await kvlab.kit.plot(
          root,
          plot,
          [
            line("no prefix cache", "no_cache", "#ef5350"),
            line("token-granular (radix tree)", "token_granular", "#5c6bc0"),
            line(data.view.blocks_name, "blocks", "#ffb300", "dash"),
          ],
          {
            margin: { l: 70, r: 10, t: 10, b: 50 },
            height: 340,
            legend: { orientation: "h", y: 1.12, x: 0 },
            xaxis: { title: { text: "requests served" } },
            yaxis: { title: { text: "prefill tokens computed, total" }, tickformat: ",", rangemode: "tozero" },
          }
        );
      },
    });
  },
});
