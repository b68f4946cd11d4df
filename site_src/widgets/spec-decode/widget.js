/* Speculative decoding, step by step. Stepping re-renders data already computed;
 * changing a setting calls kvlab.spec_decode_figure in Pyodide (the numpy tiny model:
 * its weights download on that first call). Every number and sentence is Python's
 * (data.view); kit.bind puts them in the template's markup. */
kvlab.register("spec-decode", {
  mount(root, ctx) {
    const live = root.querySelector(".kv-sd-live");
    const button = (action) => root.querySelector(`[data-action="${action}"]`);
    let step = 0; // index into data.view.steps

    const loop = ctx.form("spec_decode_figure", {
      sync: true,
      draw: () => go(step), // keep the step the reader was on, if it still exists
    });

    function go(to) {
      const data = loop.data;
      step = Math.max(0, Math.min(data.view.steps.length - 1, to));
      kvlab.kit.bind(live, data.view.steps[step]);
      button("prev").disabled = step === 0;
      button("next").disabled = step === data.view.steps.length - 1;
      root.dataset.step = String(step + 1);
    }

    button("prev").addEventListener("click", () => go(step - 1));
    button("next").addEventListener("click", () => go(step + 1));
    root.querySelector('[data-field="step"]').addEventListener("keydown", (ev) => {
      if (ev.key === "ArrowRight") { go(step + 1); ev.preventDefault(); }
      if (ev.key === "ArrowLeft") { go(step - 1); ev.preventDefault(); }
    });
    go(0);
    return {
      // Stepping needs no Python: the build-time data (the same function, the same inputs)
      // is already here. Python and the model's weights load when a setting changes
      // (or at once on an embed page whose link sets the controls).
      activate() {
        if (root.dataset.embedApplied === "true") return loop.update(); // an embed link's settings
        ctx.say("Step with Previous/Next (or ← → on the step). Changing a setting runs kvlab.spec_decode_figure in your browser.");
        ctx.setState("ready");
      },
    };
  },
});
