/* The quadratic wall: state {n, model, log} → kvlab.quadratic_wall_figure in Pyodide → render.
 * JS only renders and handles input: every number comes from Python. */
kvlab.register("quadratic-wall", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const plot = root.querySelector(".kv-plot");
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const times = (x) => x.toLocaleString("en-US", { maximumFractionDigits: 2 });
    const num = (x) => x.toLocaleString("en-US");
    // the same wording as the template's big() macro
    const big = (x) => {
      for (const [v, word] of [[1e12, "trillion"], [1e9, "billion"], [1e6, "million"], [1e3, "thousand"]]) {
        if (x >= v) return `${(x / v).toFixed(1)} ${word}`;
      }
      return String(Math.trunc(x));
    };

    let data = ctx.data;
    const state = { n: data.params.n, model: form.model.value, log: true };

    const shape = () => JSON.parse(form.model.selectedOptions[0].dataset.shape);

    const compute = ctx.live(
      "quadratic_wall_figure",
      async (result) => {
        data = result;
        await render();
      },
      (data) => `Computed in your browser by kvlab.quadratic_wall_figure (n = ${data.params.n}, ${data.params.n_layers} layers, d_model ${data.params.d_model}).`
    );
    function update() {
      return compute({ n: state.n, ...shape() });
    }

    function renderText() {
      const p = data.params;
      form.n.value = p.n;
      form["n-out"].value = p.n;
      for (const f of ["n", "n2", "n3", "n4"]) field(f).textContent = num(p.n);
      field("growth-weight").textContent = times(data.growth.cache.weight);
      field("growth-attention").textContent = times(data.growth.cache.attention);
      field("growth-weight-nc").textContent = times(data.growth.no_cache.weight);
      field("growth-attention-nc").textContent = times(data.growth.no_cache.attention);
      field("share").textContent = (100 * data.last_attention_share.cache).toFixed(1);
      field("shape").textContent = `${p.n_layers} layers, d_model ${p.d_model}, ${p.n_heads} heads (${p.n_kv_heads} KV heads), d_ff ${p.d_ff}`;
      field("w1").textContent = big(data.first.cache.weight_macs);
      field("wc").textContent = big(data.last.cache.weight_macs);
      field("wnc").textContent = big(data.last.no_cache.weight_macs);
      field("a1").textContent = big(data.first.cache.attention_macs);
      field("ac").textContent = big(data.last.cache.attention_macs);
      field("anc").textContent = big(data.last.no_cache.attention_macs);
      field("c1").textContent = big(data.first.cache.cumulative_macs);
      field("cc").textContent = big(data.last.cache.cumulative_macs);
      field("cnc").textContent = big(data.last.no_cache.cumulative_macs);
    }

    async function render() {
      renderText();
      const line = (name, y, color, dash) => ({
        name, x: data.tokens, y, mode: "lines", line: { color, width: 2.5, dash },
        hovertemplate: `%{y:.3s} multiply-adds<extra>${name}, step %{x}</extra>`,
      });
      await kvlab.kit.plot(
        root,
        plot,
        [
          line("weights, no cache", data.no_cache.weight_macs, "#ef6c00", "dash"),
          line("attention, no cache", data.no_cache.attention_macs, "#c62828", "dash"),
          line("weights, cache", data.cache.weight_macs, "#5c6bc0", "solid"),
          line("attention, cache", data.cache.attention_macs, "#00897b", "solid"),
        ],
        {
          margin: { l: 70, r: 10, t: plot.clientWidth < 520 ? 80 : 40, b: 50 },
          height: 360,
          legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom" },
          xaxis: { title: { text: "step (tokens in context)" } },
          yaxis: { title: { text: "multiply-adds in this step" }, type: state.log ? "log" : "linear", exponentformat: "power" },
        }
      );
    }

    form.addEventListener("input", (ev) => {
      if (ev.target === form.log) {
        state.log = form.log.checked;
        if (root.dataset.state === "ready") render();
        return;
      }
      state.n = parseInt(form.n.value, 10);
      state.model = form.model.value;
      form["n-out"].value = state.n;
      update();
    });

    return { activate: () => update() };
  },
});
