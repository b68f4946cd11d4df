/* The race: state {n} → kvlab.race_figure in Pyodide → readout, table, Plotly.
 * JS only renders and handles input: every number comes from Python. */
kvlab.register("race", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const plot = root.querySelector(".kv-plot");
    const tbody = root.querySelector(".kv-race-table tbody");
    const details = root.querySelector(".kv-numbers");
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const num = (x) => x.toLocaleString("en-US");
    const times = (x) => x.toLocaleString("en-US", { maximumFractionDigits: 2 });

    let data = ctx.data;
    const state = { n: data.params.n };

    const compute = ctx.live(
      "race_figure",
      async (result) => {
        data = result;
        await render();
      },
      (data) => `Computed in your browser by kvlab.race_figure (n = ${data.params.n}).`
    );
    function update() {
      return compute({ n: state.n });
    }

    function renderText() {
      form.n.value = data.params.n;
      form["n-out"].value = data.params.n;
      field("n").textContent = num(data.params.n);
      field("n2").textContent = data.params.n;
      field("no-cache").textContent = num(data.totals.no_cache);
      field("cache").textContent = num(data.totals.cache);
      field("ratio").textContent = times(data.totals.ratio);
      tbody.replaceChildren(
        ...data.tokens.map((t, i) => {
          const tr = document.createElement("tr");
          const th = Object.assign(document.createElement("th"), { scope: "row", textContent: num(t) });
          const cells = [num(data.no_cache.cumulative[i]), num(data.cache.cumulative[i]), times(data.ratio[i]) + "×"];
          tr.append(th, ...cells.map((text) => Object.assign(document.createElement("td"), { textContent: text })));
          return tr;
        })
      );
    }

    async function render() {
      renderText();
      const Plotly = await kvlab.plotly();
      const style = getComputedStyle(root);
      const grid = style.getPropertyValue("--md-default-fg-color--lightest") || "rgba(128,128,128,0.2)";
      Plotly.react(
        plot,
        [
          { name: "without a cache", x: data.tokens, y: data.no_cache.cumulative, mode: "lines", line: { color: "#ef6c00", width: 3 },
            hovertemplate: "%{y:,} token-computations<extra>without a cache, n = %{x}</extra>" },
          { name: "with a cache", x: data.tokens, y: data.cache.cumulative, mode: "lines", line: { color: "#5c6bc0", width: 3 },
            hovertemplate: "%{y:,} token-computations<extra>with a cache, n = %{x}</extra>" },
          { name: "ratio (right axis)", x: data.tokens, y: data.ratio, yaxis: "y2", mode: "lines", line: { color: style.color, width: 1.5, dash: "dot" },
            hovertemplate: "%{y:.2f}× more<extra>ratio, n = %{x}</extra>" },
        ],
        {
          margin: { l: 70, r: 60, t: plot.clientWidth < 520 ? 80 : 40, b: 50 },
          height: 340,
          paper_bgcolor: "rgba(0,0,0,0)",
          plot_bgcolor: "rgba(0,0,0,0)",
          font: { color: style.color, family: style.fontFamily },
          legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom" },
          xaxis: { title: { text: "tokens generated" }, gridcolor: grid, zeroline: false },
          yaxis: { title: { text: "token-computations (total)" }, gridcolor: grid, rangemode: "tozero", separatethousands: true },
          yaxis2: { title: { text: "ratio ×" }, overlaying: "y", side: "right", rangemode: "tozero", showgrid: false },
        },
        { displayModeBar: false, responsive: true }
      );
      details.open = false;
    }

    form.addEventListener("input", () => {
      state.n = parseInt(form.n.value, 10);
      form["n-out"].value = state.n;
      update();
    });

    return { activate: () => update() };
  },
});
