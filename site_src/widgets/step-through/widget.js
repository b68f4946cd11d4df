/* Step through a cached generation. Stepping between steps only re-renders
 * data already computed; changing prompt length, steps or layers calls
 * kvlab.step_through_figure in Pyodide. Every number and sentence is Python's (data.view);
 * kit.bind puts them in the template's markup. */
kvlab.register("step-through", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const button = (action) => root.querySelector(`[data-action="${action}"]`);
    const gridWrap = field("grid");
    const PLAY_MS = 1100;

    let step = 0; // index into data.steps (0 = prefill)
    let timer = null;
    const SETTINGS = ["prompt_len", "steps", "layers"];

    const live = root.querySelector(".kv-st-live");
    const cacheBox = button("cache");
    const cacheOn = () => cacheBox.checked;

    /* The step the reader is on: Python's words and grid for it (data.view.steps), into the live part. */
    function renderStep() {
      const data = loop.data;
      const view = data.view.steps[step];
      // with the cache off: Python's grid and words for the same step without one (view.no_cache)
      kvlab.kit.bind(live, cacheOn() ? view : { ...view, ...view.no_cache });
      root.dataset.cache = cacheOn() ? "on" : "off";
      button("prev").disabled = step === 0;
      button("next").disabled = step === data.steps.length - 1;
      root.dataset.step = String(data.steps[step].step);
    }

    function go(to) {
      step = Math.max(0, Math.min(loop.data.steps.length - 1, to));
      renderStep();
    }

    function stop() {
      clearInterval(timer);
      timer = null;
      button("play").setAttribute("aria-pressed", "false");
      button("play").textContent = "Play";
    }

    // prefers-reduced-motion: Play never advances on its own; each press shows one step.
    const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");
    reducedMotion.addEventListener("change", () => reducedMotion.matches && stop());

    function play() {
      if (timer) return stop();
      const data = loop.data;
      if (reducedMotion.matches) {
        go(step === data.steps.length - 1 ? 0 : step + 1);
        ctx.say("Reduced motion is on, so Play does not advance by itself: each press shows the next step.");
        return;
      }
      if (step === data.steps.length - 1) go(0);
      button("play").setAttribute("aria-pressed", "true");
      button("play").textContent = "Pause";
      timer = setInterval(() => {
        if (step >= loop.data.steps.length - 1) return stop();
        go(step + 1);
      }, PLAY_MS);
    }

    const loop = ctx.form("step_through_figure", {
      read: () => Object.fromEntries(SETTINGS.map((name) => [name, parseInt(form[name].value, 10)])),
      sync: true,
      draw() {
        stop();
        go(step); // keep the step the reader was on, if it still exists
      },
    });

    button("prev").addEventListener("click", () => { stop(); go(step - 1); });
    button("next").addEventListener("click", () => { stop(); go(step + 1); });
    button("play").addEventListener("click", play);
    cacheBox.addEventListener("change", () => {
      renderStep();
      ctx.say(cacheOn() ? "The cache is on: each step computes K and V for the new token only." : "The cache is off: each step computes K and V again for every token so far.");
    });
    gridWrap.addEventListener("keydown", (ev) => {
      if (ev.key === "ArrowRight") { stop(); go(step + 1); ev.preventDefault(); }
      if (ev.key === "ArrowLeft") { stop(); go(step - 1); ev.preventDefault(); }
    });
    renderStep();
    return {
      // Stepping needs no Python: the build-time data (the same function, the same
      // inputs) is already here. Python loads when a setting changes.
      activate() {
        ctx.say("Step with Prev/Next (or ← → on the grid). Changing a setting runs kvlab.step_through_figure in your browser.");
        ctx.setState("ready");
      },
    };
  },
});
