/* The quadratic wall: state {n, model, log} → kvlab.quadratic_wall_figure in Pyodide → render.
 * Every number and its wording come from Python (kit.bind fills the template); JS draws the chart. */
kvlab.register("quadratic-wall", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const plot = root.querySelector(".kv-plot");
    const shape = () => JSON.parse(form.model.selectedOptions[0].dataset.shape);

    async function render(data) {
      const line = (name, side, part, color, dash) => ({
        name, x: data.tokens, y: data[side][`${part}_macs`], mode: "lines", line: { color, width: 2.5, dash },
        hovertext: data.view.hover[`${side}_${part}`], hovertemplate: "%{hovertext}", // the trace's name in the side box
      });
      await kvlab.kit.plot(
        root,
        plot,
        [
          line("weights, no cache", "no_cache", "weight", "#ef6c00", "dash"),
          line("attention, no cache", "no_cache", "attention", "#c62828", "dash"),
          line("weights, cache", "cache", "weight", "#5c6bc0", "solid"),
          line("attention, cache", "cache", "attention", "#00897b", "solid"),
        ],
        {
          margin: { l: 70, r: 10, t: plot.clientWidth < 520 ? 80 : 40, b: 50 },
          height: 360,
          legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom" },
          xaxis: { title: { text: "step (tokens in context)" } },
          yaxis: { title: { text: "multiply-adds in this step" }, type: form.log.checked ? "log" : "linear", exponentformat: "power" },
        }
      );
    }

    return ctx.form("quadratic_wall_figure", {
      read(ev, data) {
        // the y-axis's scale is the chart's alone: drawn again, nothing computed
        if (ev && ev.target === form.log) {
          if (root.dataset.state === "ready") render(data);
          return null;
        }
        return { n: parseInt(form.n.value, 10), ...shape() };
      },
      sync: (data) => ({ n: data.params.n }),
      draw: render,
    });
  },
});
