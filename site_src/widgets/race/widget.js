/* The race: state {n} → kvlab.race_figure in Pyodide → readout, odometers, table, Plotly.
 * kit.bind fills the template; JS handles input and plays the odometers' frames
 * (kvlab.race_odometers, in words in data.view.frames): every number and text comes from Python. Under prefers-reduced-motion "Race" shows the
 * two telling moments (the cached model finishes; the other one finishes) without motion. */
kvlab.register("race", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const form = root.querySelector(".kv-controls");
    const plot = root.querySelector(".kv-plot");
    const odometers = root.querySelector(".kv-odometers");
    const details = root.querySelector(".kv-numbers");
    const raceButton = root.querySelector('[data-action="race"]');
    const readoutLine = root.querySelector('[data-field="odo-readout"]');
    const RACE_MS = 6000; // the whole race, at the same units per second for both

    let anim = null; // {start, raf}
    let stillStep = 0; // reduced motion: which still is shown next

    const loop = ctx.form("race_figure", {
      read: () => ({ n: parseInt(form.n.value, 10) }),
      sync: (data) => ({ n: data.params.n }),
      draw(data) {
        stop();
        return render(data);
      },
    });

    /* One frame of the odometers (Python's frames, in words: data.view.frames), into the template's fields. */
    const showFrame = (f) => kit.bind(odometers, f);
    const readout = () => (readoutLine.textContent = loop.data.view.readout);

    function stop() {
      if (anim) cancelAnimationFrame(anim.raf);
      anim = null;
      raceButton.textContent = "Race";
      raceButton.setAttribute("aria-pressed", "false");
    }
    function race() {
      if (anim) return stop();
      const data = loop.data;
      const frames = data.odometers.frames;
      const shown = data.view.frames;
      if (kit.reducedMotion()) {
        // two stills instead of motion: the cached model done, then both done
        const f = stillStep === 0 ? data.view.key_frame : shown[shown.length - 1];
        showFrame(f);
        ctx.say(stillStep === 0
          ? "Reduced motion: the moment the cached model finishes. Press Race again for the end."
          : "Reduced motion: the end of the race. Press Race again for the moment the cached model finishes.");
        stillStep = 1 - stillStep;
        return;
      }
      raceButton.textContent = "Pause";
      raceButton.setAttribute("aria-pressed", "true");
      readoutLine.textContent = "Racing…";
      anim = { start: performance.now(), raf: 0 };
      let i = 0;
      const tick = (now) => {
        const t = (now - anim.start) / RACE_MS;
        while (i < frames.length - 1 && frames[i + 1].t <= t) i++;
        showFrame(shown[i]);
        if (i >= frames.length - 1) {
          stop();
          readout();
          root.dataset.raced = "true";
          return;
        }
        anim.raf = requestAnimationFrame(tick);
      };
      anim.raf = requestAnimationFrame(tick);
    }
    raceButton.addEventListener("click", race);

    async function render(data) {
      await kit.plot(root, plot,
        [
          { name: "without a cache", x: data.tokens, y: data.no_cache.cumulative, mode: "lines", line: { color: "#ef6c00", width: 3 },
            hovertext: data.view.hover.no_cache, hovertemplate: "%{hovertext}<extra>without a cache, n = %{x}</extra>" },
          { name: "with a cache", x: data.tokens, y: data.cache.cumulative, mode: "lines", line: { color: "#5c6bc0", width: 3 },
            hovertext: data.view.hover.cache, hovertemplate: "%{hovertext}<extra>with a cache, n = %{x}</extra>" },
          { name: "ratio (right axis)", x: data.tokens, y: data.ratio, yaxis: "y2", mode: "lines", line: { color: kit.TEXT, width: 1.5, dash: "dot" },
            hovertext: data.view.hover.ratio, hovertemplate: "%{hovertext}<extra>ratio, n = %{x}</extra>" },
        ],
        {
          margin: { l: 70, r: 60, t: plot.clientWidth < 520 ? 80 : 40, b: 50 },
          height: 340,
          legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom" },
          xaxis: { title: { text: "tokens generated" } },
          yaxis: { title: { text: "token-computations (total)" }, rangemode: "tozero", separatethousands: true },
          yaxis2: { title: { text: "ratio ×" }, overlaying: "y", side: "right", rangemode: "tozero", showgrid: false },
        }
      );
      details.open = false;
    }

    window.addEventListener("pagehide", stop);

    return loop;
  },
});
