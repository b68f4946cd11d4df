/* Attention on a sentence. State → kvlab.attention_demo in Pyodide → render.
 * JS only renders and handles input: every number comes from Python. */
kvlab.register("attention", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const plot = root.querySelector(".kv-plot");
    const table = root.querySelector(".kv-heatmap");
    const details = root.querySelector(".kv-numbers");
    const querySelect = root.querySelector("select[name=query]");
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const fmt = (x) => x.toFixed(3);

    let data = ctx.data;
    const state = {
      d: data.d,
      temperature: data.temperature,
      seed: data.seed,
      causal: data.causal,
      query: data.tokens.length - 1,
    };
    function readForm() {
      state.d = parseInt(form.d.value, 10);
      state.temperature = parseFloat(form.temperature.value);
      const seed = parseInt(form.seed.value, 10);
      state.seed = Number.isFinite(seed) ? seed : 0;
      state.causal = form.causal.checked;
      form["d-out"].value = state.d;
      form["temperature-out"].value = state.temperature.toFixed(1);
    }

    const compute = ctx.live(
      "attention_demo",
      (result) => {
        data = result;
        form.seed.value = data.seed; // Python clamps out-of-range input: show what was computed
        render();
      },
      (d) => `Computed in your browser by kvlab.attention_demo (d = ${d.d}, temperature = ${d.temperature}).`
    );
    const update = () => compute({ d: state.d, temperature: state.temperature, seed: state.seed, causal: state.causal });

    function renderTable() {
      field("d").textContent = data.d;
      field("temperature").textContent = data.temperature;
      field("seed").textContent = data.seed;
      const rows = table.tBodies[0].rows;
      data.weights.forEach((row, i) => {
        row.forEach((w, j) => {
          const cell = rows[i].cells[j + 1];
          cell.textContent = fmt(w);
          cell.style.setProperty("--w", fmt(w));
        });
      });
      field("causal").textContent = data.causal ? ", causal" : ", no mask";
    }

    function renderReadout() {
      const q = state.query;
      const row = data.weights[q];
      const top = row.indexOf(Math.max(...row));
      field("query-token").textContent = data.tokens[q];
      field("top-token").textContent = data.tokens[top];
      field("d2").textContent = data.d;
      const list = field("output");
      list.replaceChildren(...data.outputs[q].map((x) => Object.assign(document.createElement("li"), { textContent: fmt(x) })));
    }

    function render() {
      renderTable();
      renderReadout();
      // the heatmap (kit.heatmap: no chart library); a click on a cell reads its query row
      kvlab.kit.heatmap(plot, {
        // future keys under the causal mask are not "weight 0": they don't exist yet
        z: data.weights.map((row, i) => row.map((w, j) => (data.causal && j > i ? null : w))),
        x: data.tokens,
        y: data.tokens,
        xTitle: "key (what is read)",
        yTitle: "query",
        title: (i, j, w) => `query “${data.tokens[i]}” → key “${data.tokens[j]}”: weight ${fmt(w)}`,
        onCell: (i) => {
          state.query = i;
          querySelect.value = String(i);
          renderReadout();
        },
      });
      details.open = false;
    }

    form.addEventListener("input", () => {
      readForm();
      update();
    });
    querySelect.addEventListener("change", () => {
      state.query = parseInt(querySelect.value, 10);
      renderReadout();
    });

    return { activate: () => update() };
  },
});
