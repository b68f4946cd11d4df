/* Step through a cached generation. Stepping between steps only re-renders
 * data already computed; changing prompt length, steps or layers calls
 * kvlab.step_through_figure in Pyodide. JS never computes a number itself. */
kvlab.register("step-through", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const button = (action) => root.querySelector(`[data-action="${action}"]`);
    const gridWrap = field("grid");
    const PLAY_MS = 1100;

    let data = ctx.data;
    let step = 0; // index into data.steps (0 = prefill)
    let timer = null;
    const state = { prompt_len: data.params.prompt_len, steps: data.params.steps, layers: data.params.layers };

    // ---- text, the same wording as the template's macros
    const span = (ps) => (ps.length === 1 ? `token ${ps[0] + 1}` : `tokens ${ps[0] + 1}–${ps[ps.length - 1] + 1}`);
    const phase = (s) =>
      s.phase === "prefill"
        ? `Prefill · step ${s.step} · cache empty before, ${s.cache_len_after} entries after`
        : `Decode · step ${s.step} · ${s.cache_len_before} entries read, ${s.cache_len_after} after the step`;
    const describe = (s) => {
      const l0 = s.layers[0];
      return s.phase === "prefill"
        ? `Every layer computes K and V for ${span(l0.computed)} (the whole prompt, in one pass) and writes them to its cache; nothing is read from the cache yet.`
        : `Every layer computes K and V for ${span(l0.computed)} only, and reads ${span(l0.read)} from its cache. Without a cache this step would push all ${s.without_cache_recomputed.length} tokens through every layer.`;
    };
    const sci = (x) => {
      const [m, e] = x.toExponential(1).split("e");
      return `${m}e${parseInt(e, 10)}`;
    };

    function el(tag, props, ...children) {
      const node = Object.assign(document.createElement(tag), props || {});
      node.append(...children);
      return node;
    }

    function gridTable(s) {
      const width = data.steps[data.steps.length - 1].cache_len_after;
      const positions = [...Array(width).keys()];
      const head = el("tr", null, el("th", { scope: "col", textContent: "layer" }), ...positions.map((p) => el("th", { scope: "col", textContent: p + 1 })));
      const rows = s.layers.map((lay) => {
        const computed = new Set(lay.computed);
        const read = new Set(lay.read);
        const cells = positions.map((p) => {
          const [cls, text] = computed.has(p) ? ["kv-st-computed", "computed"] : read.has(p) ? ["kv-st-read", "read"] : ["kv-st-empty", "not yet"];
          return el("td", { className: cls }, el("span", { className: "kv-st-sr", textContent: text }));
        });
        return el("tr", null, el("th", { scope: "row", textContent: lay.layer + 1 }), ...cells);
      });
      return el("table", { className: "kv-st-grid" }, el("caption", { className: "kv-st-sr", textContent: phase(s) }), el("thead", null, head), el("tbody", null, ...rows));
    }

    function renderStep() {
      const s = data.steps[step];
      field("counter").textContent = `step ${s.step} of ${data.params.steps}`;
      field("phase").textContent = phase(s);
      gridWrap.replaceChildren(gridTable(s));
      field("describe").textContent = describe(s);
      button("prev").disabled = step === 0;
      button("next").disabled = step === data.steps.length - 1;
      root.dataset.step = String(s.step);
    }

    function renderEquivalence() {
      const eq = data.equivalence;
      field("tokens-no-cache").textContent = eq.tokens_no_cache.join(" ");
      field("tokens-cache").textContent = eq.tokens_cache.join(" ");
      field("same").textContent = eq.same_tokens ? "identical" : "different";
      field("diff").textContent = sci(eq.max_abs_logit_diff);
      field("work-no-cache").textContent = eq.tokens_processed.no_cache;
      field("work-cache").textContent = eq.tokens_processed.cache;
      const p = data.params;
      for (const name of ["prompt_len", "steps", "layers"]) {
        form[name].value = p[name];
        form[`${name}-out`].value = p[name];
      }
      field("eq-steps").textContent = p.steps + 1;
    }

    function go(to) {
      step = Math.max(0, Math.min(data.steps.length - 1, to));
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
      if (reducedMotion.matches) {
        go(step === data.steps.length - 1 ? 0 : step + 1);
        ctx.say("Reduced motion is on, so Play does not advance by itself: each press shows the next step.");
        return;
      }
      if (step === data.steps.length - 1) go(0);
      button("play").setAttribute("aria-pressed", "true");
      button("play").textContent = "Pause";
      timer = setInterval(() => {
        if (step >= data.steps.length - 1) return stop();
        go(step + 1);
      }, PLAY_MS);
    }

    const compute = ctx.live(
      "step_through_figure",
      async (result) => {
        data = result;
        stop();
        go(step); // keep the step the reader was on, if it still exists
        renderEquivalence();
      },
      (data) => `Computed in your browser by kvlab.step_through_figure (prompt ${data.params.prompt_len} tokens, ${data.params.steps} decode steps, ${data.params.layers} layers).`
    );
    function update() {
      return compute({ ...state });
    }

    button("prev").addEventListener("click", () => { stop(); go(step - 1); });
    button("next").addEventListener("click", () => { stop(); go(step + 1); });
    button("play").addEventListener("click", play);
    gridWrap.addEventListener("keydown", (ev) => {
      if (ev.key === "ArrowRight") { stop(); go(step + 1); ev.preventDefault(); }
      if (ev.key === "ArrowLeft") { stop(); go(step - 1); ev.preventDefault(); }
    });
    form.addEventListener("input", () => {
      for (const name of ["prompt_len", "steps", "layers"]) {
        state[name] = parseInt(form[name].value, 10);
        form[`${name}-out`].value = state[name];
      }
      update();
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
