/* Times each token was processed: state {n} → kvlab.reprocessing_figure in Pyodide → render.
 * kit.bind fills the template from Python's result; JS handles input, the counters' flash and the chart. */
kvlab.register("reprocessing", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const plot = root.querySelector(".kv-plot");
    const addButton = root.querySelector('[data-action="add"]');

    const loop = ctx.form("reprocessing_figure", {
      read: () => ({ n: parseInt(form.n.value, 10) }),
      sync: (data) => ({ n: data.params.n }),
      draw: render,
    });

    function renderText(data) {
      addButton.disabled = data.params.n >= Number(form.n.max);
      // the counters that changed flash once (not under reduced motion)
      if (!kvlab.kit.reducedMotion()) {
        root.querySelectorAll(".kv-counters dd").forEach((dd) => {
          dd.classList.remove("kv-tick");
          void dd.offsetWidth; // restart the animation
          dd.classList.add("kv-tick");
        });
      }
    }

    /* Token positions and counts are whole numbers: at a small n Plotly's own ticks fall
     * between them (0.5, 1.5, "token 1.5"), so below INT_TICKS_BELOW tokens the ticks are
     * whole steps, at most `most` of them; above it Plotly's steps are whole already. */
    const INT_TICKS_BELOW = 12;
    const wholeTicks = (n, most) =>
      n < INT_TICKS_BELOW ? { tickmode: "linear", tick0: 0, dtick: Math.max(1, Math.ceil(n / most)), tickformat: "d" } : { tickformat: "d" };

    async function render(data) {
      renderText(data);
      const n = data.params.n;
      await kvlab.kit.plot(
        root,
        plot,
        [
          { type: "bar", name: "without a cache", x: data.tokens, y: data.no_cache, marker: { color: "#ef6c00" },
            hovertext: data.view.hover.no_cache, hovertemplate: "%{hovertext}<extra>without a cache</extra>" },
          { type: "bar", name: "with a cache", x: data.tokens, y: data.cache, marker: { color: "#5c6bc0" },
            hovertext: data.view.hover.cache, hovertemplate: "%{hovertext}<extra>with a cache</extra>" },
        ],
        {
          barmode: "overlay",
          bargap: 0.15,
          margin: { l: 60, r: 10, t: plot.clientWidth < 520 ? 80 : 40, b: 50 },
          height: 300,
          legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom" },
          xaxis: { title: { text: "token position" }, ...wholeTicks(n, 10) },
          yaxis: { title: { text: "times processed" }, rangemode: "tozero", ...wholeTicks(n, 6) },
        }
      );
    }

    // "Add token": one more token in the reply; Python returns the counters for it
    addButton.addEventListener("click", () => {
      const n = Math.min(Number(form.n.max), loop.data.params.n + 1);
      form.n.value = n;
      form["n-out"].value = n;
      loop.call({ n });
    });
    root.querySelector('[data-action="restart"]').addEventListener("click", () => loop.call({ n: Number(form.n.min) }));

    return loop;
  },
});
