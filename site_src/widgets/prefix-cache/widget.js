/* One system prompt, many requests. State → kvlab.prefix_cache_figure in Pyodide → kit.bind
 * fills the template's sentence and tables from Python's result; JS draws the chart. */
kvlab.register("prefix-cache", {
  mount(root, ctx) {
    const plot = root.querySelector(".kv-plot");

    return ctx.form("prefix_cache_figure", {
      async draw(data) {
        const line = (name, y, color, dash) => ({
          type: "scatter", mode: "lines", name, x: data.requests, y, line: { color, width: 2.5, dash },
          hovertemplate: "after request %{x}: %{y:,} tokens computed<extra>" + name + "</extra>",
        });
        await kvlab.kit.plot(
          root,
          plot,
          [
            line("no prefix cache", data.no_cache.cumulative_computed, "#ef5350"),
            line("token-granular (radix tree)", data.token_granular.cumulative_computed, "#5c6bc0"),
            line(data.view.blocks_name, data.blocks.cumulative_computed, "#ffb300", "dash"),
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
