/* The race: state {n} → kvlab.race_figure in Pyodide → readout, odometers, table, Plotly.
 * JS only renders, handles input and plays the odometers' frames (kvlab.race_odometers):
 * every number comes from Python. Under prefers-reduced-motion "Race" shows the
 * two telling moments (the cached model finishes; the other one finishes) without motion. */
kvlab.register("race", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const form = root.querySelector(".kv-controls");
    const plot = root.querySelector(".kv-plot");
    const tbody = root.querySelector(".kv-race-table tbody");
    const details = root.querySelector(".kv-numbers");
    const raceButton = root.querySelector('[data-action="race"]');
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const num = (x) => x.toLocaleString("en-US");
    const times = (x) => x.toLocaleString("en-US", { maximumFractionDigits: 2 });
    const RACE_MS = 6000; // the whole race, at the same units per second for both

    let data = ctx.data;
    const state = { n: data.params.n };
    let anim = null; // {start, raf}
    let stillStep = 0; // reduced motion: which still is shown next

    const compute = ctx.live(
      "race_figure",
      async (result) => {
        stop();
        data = result;
        await render();
      },
      (data) => `Computed in your browser by kvlab.race_figure (n = ${data.params.n}).`
    );
    function update() {
      return compute({ n: state.n });
    }

    /* One frame of the odometers (a kvlab.race_odometers frame). */
    function showFrame(f) {
      const od = data.odometers;
      for (const side of ["no_cache", "cache"]) {
        field(`odo-${side}-units`).textContent = num(f[side].units);
        field(`odo-${side}-tokens`).textContent = f[side].tokens;
        const bar = field(`odo-${side}-bar`);
        bar.max = od.n;
        bar.value = f[side].tokens;
        root.querySelector(`.kv-odo[data-side="${side}"]`).dataset.done = String(f[side].tokens === od.n);
      }
      field("odo-n").textContent = od.n;
      field("odo-n2").textContent = od.n;
    }
    const keyFrame = () => data.odometers.frames.find((f) => f.units === data.odometers.cache_done.units);
    function readout() {
      const od = data.odometers;
      field("odo-readout").textContent = `When the cached model has written all ${od.n} tokens (${num(od.cache_done.units)} units), the other has written ${od.cache_done.no_cache_tokens}; it needs ${num(od.no_cache_done.units)} units to finish.`;
    }

    function stop() {
      if (anim) cancelAnimationFrame(anim.raf);
      anim = null;
      raceButton.textContent = "Race";
      raceButton.setAttribute("aria-pressed", "false");
    }
    function race() {
      if (anim) return stop();
      const frames = data.odometers.frames;
      if (kit.reducedMotion()) {
        // two stills instead of motion: the cached model done, then both done
        const f = stillStep === 0 ? keyFrame() : frames[frames.length - 1];
        showFrame(f);
        ctx.say(stillStep === 0
          ? "Reduced motion: the moment the cached model finishes. Press Race again for the end."
          : "Reduced motion: the end of the race. Press Race again for the moment the cached model finishes.");
        stillStep = 1 - stillStep;
        return;
      }
      raceButton.textContent = "Pause";
      raceButton.setAttribute("aria-pressed", "true");
      field("odo-readout").textContent = "Racing…";
      anim = { start: performance.now(), raf: 0 };
      let i = 0;
      const tick = (now) => {
        const t = (now - anim.start) / RACE_MS;
        while (i < frames.length - 1 && frames[i + 1].t <= t) i++;
        showFrame(frames[i]);
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

    function renderText() {
      form.n.value = data.params.n;
      form["n-out"].value = data.params.n;
      field("n").textContent = num(data.params.n);
      field("n2").textContent = data.params.n;
      field("no-cache").textContent = num(data.totals.no_cache);
      field("cache").textContent = num(data.totals.cache);
      field("ratio").textContent = times(data.totals.ratio);
      showFrame(keyFrame());
      readout();
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
      await kit.plot(root, plot,
        [
          { name: "without a cache", x: data.tokens, y: data.no_cache.cumulative, mode: "lines", line: { color: "#ef6c00", width: 3 },
            hovertemplate: "%{y:,} token-computations<extra>without a cache, n = %{x}</extra>" },
          { name: "with a cache", x: data.tokens, y: data.cache.cumulative, mode: "lines", line: { color: "#5c6bc0", width: 3 },
            hovertemplate: "%{y:,} token-computations<extra>with a cache, n = %{x}</extra>" },
          { name: "ratio (right axis)", x: data.tokens, y: data.ratio, yaxis: "y2", mode: "lines", line: { color: kit.TEXT, width: 1.5, dash: "dot" },
            hovertemplate: "%{y:.2f}× more<extra>ratio, n = %{x}</extra>" },
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

    form.addEventListener("input", () => {
      state.n = parseInt(form.n.value, 10);
      form["n-out"].value = state.n;
      update();
    });
    window.addEventListener("pagehide", stop);

    return { activate: () => update() };
  },
});
