/* Eviction policies on a bounded cache. State → kvlab.eviction_view in Pyodide → render.
 * The raster, the readout and the curves all come from Python's data; JS places them. */
kvlab.register("eviction", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const raster = root.querySelector(".kv-raster");
    raster.hidden = true; // shown with the first live chart; until then the build-time raster stands
    const keptPlot = root.querySelector(".kv-kept");
    const details = root.querySelector(".kv-numbers");
    const stepInput = root.querySelector('input[name="step"]');
    const stepOut = root.querySelector('output[name="step-out"]');
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const RANGES = ["window", "n_sink", "budget", "recent"];
    const NAMES = { n: "tokens n", window: "window", n_sink: "sink tokens", budget: "budget", recent: "recent" };
    const COLORS = { 1: "#ef5350", 2: "#5c6bc0", 3: "#ffb300" };
    const LABELS = ["not written yet", "evicted", "cached", "added at this step"];
    const LINE = { full: "#9e9e9e", window: "#ef5350", sinks: "#5c6bc0", h2o: "#26a69a" };
    let data = ctx.data;
    let step = null; // null: follow the last step

    function showRelevantControls() {
      form.querySelectorAll("[data-for]").forEach((label) => {
        label.hidden = !label.dataset.for.split(" ").includes(form.policy.value);
      });
    }

    function readForm() {
      showRelevantControls();
      for (const k of RANGES) form[`${k}-out`].value = form[k].value;
      const n = Number(form.n.value);
      const args = { policy: form.policy.value, n: form.n.value.trim() === "" || !Number.isFinite(n) ? data.params.n : n };
      for (const k of RANGES) args[k] = parseInt(form[k].value, 10);
      return args;
    }

    // latest input wins (ctx.live): Python clamps out-of-range input, so show what was really computed
    const compute = ctx.live(
      "eviction_view",
      async (result) => {
        data = result;
        ctx.reportClamped(data, NAMES);
        for (const k of RANGES) form[`${k}-out`].value = form[k].value;
        await render();
      },
      (data) => `Computed in your browser by kvlab.eviction_view (${data.policy_name}, n = ${data.params.n}).`
    );
    const update = () => compute(readForm());

    function currentStep() {
      const last = data.steps.length - 1;
      return step === null || step > last ? last : step;
    }

    function renderReadout() {
      const s = data.steps[currentStep()];
      stepInput.max = String(data.steps.length - 1);
      stepInput.value = String(s.step);
      stepOut.value = s.step;
      field("policy_name").textContent = data.policy_name;
      field("step").textContent = s.step;
      field("position").textContent = s.position;
      field("cache_len").textContent = s.cache_len_after;
      field("cached_text").textContent = s.cached_text;
      field("evicted_text").textContent = s.evicted_text;
      field("n_evicted_total").textContent = s.n_evicted_total;
      field("attention_kept_text").textContent = s.attention_kept_text;
    }

    function stepShapes(Plotly) {
      const s = currentStep();
      Plotly.relayout(raster, { shapes: [{ type: "rect", xref: "paper", x0: 0, x1: 1, y0: s - 0.5, y1: s + 0.5, line: { color: "#ffb300", width: 1.5 } }] });
      Plotly.relayout(keptPlot, { shapes: [{ type: "line", yref: "paper", y0: 0, y1: 1, x0: s, x1: s, line: { color: "#ffb300", width: 1.5, dash: "dot" } }] });
    }

    function renderTable() {
      const rows = data.steps.map((s) => {
        const tr = document.createElement("tr");
        tr.append(Object.assign(document.createElement("th"), { scope: "row", textContent: String(s.step) }));
        for (const text of [s.cached_text, s.evicted_text, s.attention_kept_text]) tr.append(Object.assign(document.createElement("td"), { textContent: text }));
        return tr;
      });
      field("steps").replaceChildren(...rows);
      field("n").textContent = data.params.n;
      for (const [key, p] of Object.entries(data.compare)) field(`mean-${key}`).textContent = p.mean_text;
    }

    async function render() {
      renderReadout();
      renderTable();
      const Plotly = await kvlab.plotly();
      // the build-time raster stays up until the live chart replaces it (no blank box in between)
      raster.hidden = false;
      const still = root.querySelector(".kv-static-raster");
      if (still) still.style.display = "none";
      const style = getComputedStyle(root);
      const font = { color: style.color, family: style.fontFamily };
      const n = data.params.n;
      const axis = { zeroline: false, showgrid: false };
      const c0 = "rgba(0,0,0,0)";
      Plotly.react(
        raster,
        [{
          type: "heatmap",
          z: data.grid,
          zmin: 0,
          zmax: 3,
          colorscale: [[0, c0], [0.1667, c0], [0.1667, COLORS[1]], [0.5, COLORS[1]], [0.5, COLORS[2]], [0.8333, COLORS[2]], [0.8333, COLORS[3]], [1, COLORS[3]]],
          showscale: false,
          xgap: n <= 64 ? 1 : 0,
          ygap: n <= 64 ? 1 : 0,
          customdata: data.grid.map((row) => row.map((v) => LABELS[v])),
          hovertemplate: "step %{y}, position %{x}: %{customdata}<extra></extra>",
        }],
        {
          margin: { l: 55, r: 10, t: 10, b: 45 },
          height: Math.min(520, Math.max(300, 60 + n * 8)),
          paper_bgcolor: c0,
          plot_bgcolor: c0,
          font,
          xaxis: { ...axis, title: { text: "token position (its K and V)" } },
          yaxis: { ...axis, title: { text: "step (token written)" }, autorange: "reversed" },
        },
        { displayModeBar: false, responsive: true }
      );
      const steps = data.steps.map((s) => s.step);
      Plotly.react(
        keptPlot,
        Object.entries(data.compare).map(([key, p]) => ({
          type: "scatter",
          mode: "lines",
          name: p.name,
          x: steps,
          y: p.attention_kept,
          line: { color: LINE[key], width: key === data.params.policy ? 3.5 : 1.5 },
          opacity: key === data.params.policy ? 1 : 0.55,
          hovertemplate: "step %{x}: %{y:.1%} kept<extra>" + p.name + "</extra>",
        })),
        {
          margin: { l: 55, r: 10, t: 10, b: 45 },
          height: 280,
          paper_bgcolor: c0,
          plot_bgcolor: c0,
          font,
          legend: { orientation: "h", y: -0.3, x: 0 },
          xaxis: { zeroline: false, gridcolor: "rgba(128,128,128,0.2)", title: { text: "step" } },
          yaxis: { range: [0, 1.02], tickformat: ".0%", gridcolor: "rgba(128,128,128,0.2)", title: { text: "attention kept" } },
        },
        { displayModeBar: false, responsive: true }
      );
      stepShapes(Plotly);
      details.open = false;
    }

    form.addEventListener("input", update);
    stepInput.addEventListener("input", async () => {
      step = parseInt(stepInput.value, 10);
      if (step === data.steps.length - 1) step = null;
      renderReadout();
      if (root.dataset.state === "ready") stepShapes(await kvlab.plotly());
    });
    showRelevantControls();
    return { activate: () => update() };
  },
});
