/* Eviction policies on a bounded cache. State → kvlab.eviction_figure in Pyodide → kit.bind fills
 * the template's readout, means and step table from Python's result; the step slider rebinds the
 * readout's step (a data-bind-scope). The raster is the build's SVG, redrawn in place
 * (kvlab.kit.raster, the view's runs and tooltips); the curves are Plotly. */
kvlab.register("eviction", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const form = root.querySelector(".kv-controls");
    const raster = root.querySelector(".kv-static-raster");
    const keptPlot = root.querySelector(".kv-kept");
    const details = root.querySelector(".kv-numbers");
    const stepInput = root.querySelector('input[name="step"]');
    const stepOut = root.querySelector('output[name="step-out"]');
    const stepScope = root.querySelector('[data-bind-scope="view.step"]');
    const LINE = { full: "#9e9e9e", window: "#ef5350", sinks: "#5c6bc0", h2o: "#26a69a" };
    let step = null; // null: follow the last step

    function showRelevantControls() {
      form.querySelectorAll("[data-for]").forEach((label) => {
        label.hidden = !label.dataset.for.split(" ").includes(form.policy.value);
      });
    }

    // latest input wins (ctx.form): Python clamps out-of-range input, so show what was really computed
    const loop = ctx.form("eviction_figure", {
      read(ev, data) {
        showRelevantControls();
        return kit.readForm(form, data.params);
      },
      async draw() {
        showStep();
        await drawKept();
        details.open = false;
      },
    });

    function currentStep() {
      const data = loop.data;
      const last = data.steps.length - 1;
      return step === null || step > last ? last : step;
    }

    // the step read out: its sentence, the slider, and its outline on the raster (only the outline moves)
    function showStep() {
      const data = loop.data;
      const s = data.steps[currentStep()];
      stepInput.max = String(data.steps.length - 1);
      stepInput.value = String(s.step);
      stepOut.value = s.step;
      kit.bind(stepScope, data.view.steps[currentStep()]);
      kit.raster(raster, data.view.raster, { prefix: "kv-ev", rows: [{ row: s.step, className: "kv-raster-step" }] });
    }

    // the policies' attention kept, step by step, with the chosen step marked
    function drawKept() {
      const data = loop.data;
      const steps = data.steps.map((s) => s.step);
      const s = currentStep();
      return kit.plot(
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
          hovertext: data.view.hover[key], hovertemplate: "%{hovertext}<extra>" + p.name + "</extra>",
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

    stepInput.addEventListener("input", () => {
      step = parseInt(stepInput.value, 10);
      if (step === loop.data.steps.length - 1) step = null;
      showStep();
      if (root.dataset.state === "ready") drawKept();
    });
    showRelevantControls();
    return loop;
  },
});
