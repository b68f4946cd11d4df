/* One system prompt, many requests. State → kvlab.prefix_cache_figure in Pyodide → kit.bind
 * fills the template's sentence and tables from Python's result; JS draws the chart. */
kvlab.register("prefix-cache", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const plot = root.querySelector(".kv-plot");
    let data = ctx.data;

    const showRanges = (values) => {
      form["prefix_len-out"].value = values.prefix_len;
      form["suffix_len-out"].value = values.suffix_len;
    };

    // latest input wins (ctx.live): Python clamps out-of-range input, so show what was really computed
    const compute = ctx.live(
      "prefix_cache_figure",
      async (result) => {
        data = result;
        showRanges(data.params);
        kvlab.kit.bind(root, data);
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
      (data) => `Computed in your browser by kvlab.prefix_cache_figure (${data.text.n_requests} requests).`
    );
    const update = () => {
      showRanges({ prefix_len: form.prefix_len.value, suffix_len: form.suffix_len.value });
      return compute(kvlab.kit.readForm(form, data.params));
    };

    form.addEventListener("input", update);
    return { activate: () => update() };
  },
});
