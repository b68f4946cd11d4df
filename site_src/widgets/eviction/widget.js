/* Eviction policies on a bounded cache. State → kvlab.eviction_view in Pyodide → render.
 * The raster, the readout and the curves all come from Python's data; JS places them.
 * The raster is the build's SVG, redrawn in place (kvlab.kit.raster); the curves are Plotly. */
kvlab.register("eviction", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const raster = root.querySelector(".kv-static-raster");
    const keptPlot = root.querySelector(".kv-kept");
    const details = root.querySelector(".kv-numbers");
    const stepInput = root.querySelector('input[name="step"]');
    const stepOut = root.querySelector('output[name="step-out"]');
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const RANGES = ["window", "n_sink", "budget", "recent"];
    const NAMES = { n: "tokens n", window: "window", n_sink: "sink tokens", budget: "budget", recent: "recent" };
    const LABELS = ["not written yet", "evicted", "cached", "added at this step"];
    const cellTitle = (row, first, last, v) => `step ${row}, ${first === last ? `position ${first}` : `positions ${first}–${last}`}: ${LABELS[v]}`;
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

    // the grid as it is, the step read out outlined (only the outline moves with the step slider)
    function drawRaster() {
      kvlab.kit.raster(raster, data.grid, { prefix: "kv-ev", rows: [{ row: currentStep(), className: "kv-raster-step" }], title: cellTitle });
      field("raster-rows").textContent = data.grid.length - 1;
      field("raster-cols").textContent = data.grid.length ? data.grid[0].length - 1 : 0;
    }

    // the policies' attention kept, step by step, with the chosen step marked
    function drawKept() {
      const steps = data.steps.map((s) => s.step);
      const s = currentStep();
      return kvlab.kit.plot(
        root,
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
          legend: { orientation: "h", y: -0.3, x: 0 },
          xaxis: { title: { text: "step" } },
          yaxis: { range: [0, 1.02], tickformat: ".0%", title: { text: "attention kept" } },
          shapes: [{ type: "line", yref: "paper", y0: 0, y1: 1, x0: s, x1: s, line: { color: "#ffb300", width: 1.5, dash: "dot" } }],
        }
      );
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
      drawRaster();
      await drawKept();
      details.open = false;
    }

    form.addEventListener("input", update);
    stepInput.addEventListener("input", () => {
      step = parseInt(stepInput.value, 10);
      if (step === data.steps.length - 1) step = null;
      renderReadout();
      drawRaster();
      if (root.dataset.state === "ready") drawKept();
    });
    showRelevantControls();
    return { activate: () => update() };
  },
});
