/* KV cache memory. State → kvlab.kv_memory_figure in Pyodide → render.
 * Every number and every text comes from Python; kit.bind fills the template, JS draws the charts. */
kvlab.register("kv-memory", {
  mount(root, ctx) {
    const form = root.querySelector("form.kv-controls");
    const plot = root.querySelector(".kv-plot");
    const layerPlot = root.querySelector(".kv-layer-plot");
    const configForm = root.querySelector(".kv-config-form");
    const configArea = configForm.querySelector("textarea");
    const configError = configForm.querySelector(".kv-error");
    const steps = ctx.data.options.context_steps;

    const hubForm = root.querySelector(".kv-hub-form");
    const hubButton = hubForm.querySelector("button");

    let config = ""; // the pasted or fetched config.json, while it is the one shown
    let fetched = {}; // what the Hub fetch brought with it: index, hub, hub_status
    /* The config, or none; a Link or Embed says it does not carry one (embed.js). */
    function useConfig(text, hub = {}) {
      config = text;
      fetched = hub;
      if (text) root.dataset.shareMisses = "the pasted config.json (it opens on the model chosen in the Model menu)";
      else delete root.dataset.shareMisses;
    }
    /* The offline copy (file://) reaches no other origin, and its CSP says so: it offers the paste only. */
    if (location.protocol === "file:") {
      hubForm.hidden = true;
      root.querySelector(".kv-hub-offline").hidden = false;
    }

    /* Cache types an engine does not take are disabled (Python would refuse them). */
    function syncKvOptions() {
      const mode = form.mode.value;
      for (const opt of form.kv.options) opt.disabled = !opt.dataset.modes.split(" ").includes(mode);
      if (form.kv.selectedOptions[0].disabled) form.kv.value = "f16";
    }

    /* The form's values as kvlab.kv_memory_figure's arguments. The slider picks one of Python's
     * context steps; the number field is sent as typed (Python clamps it and says so). */
    function readForm(ev, data) {
      syncKvOptions();
      if (ev && ev.target === form.context_step) form.context.value = steps[parseInt(form.context_step.value, 10)];
      return { ...kvlab.kit.readForm(form, data.params), config, ...fetched };
    }

    /* hybrid: a Falcon-H1 layer, attention and a Mamba-2 state together; none: an MLP-only layer (caches nothing) */
    const LAYER_COLORS = { full: "#5c6bc0", sliding: "#ef6c00", linear: "#26a69a", mla: "#d81b60", hybrid: "#7e57c2", none: "#9e9e9e" };

    /* The layer map as a chart: per layer, what it needs (coloured by kind) and what the engine adds on top (grey). */
    function renderLayers(data) {
      const p = data.layer_map.plot;
      const hover = { hovertext: data.view.hover.layers, hovertemplate: "%{hovertext}<extra></extra>" };
      return kvlab.kit.plot(root, layerPlot, [
        { type: "bar", name: "needed", x: p.x, y: p.needed, ...hover, marker: { color: p.kind.map((k) => LAYER_COLORS[k]) } },
        { type: "bar", name: "allocated beyond the need", x: p.x, y: p.padding, ...hover,
          marker: { color: "rgba(128,128,128,0.45)" } },
      ], {
        barmode: "stack", bargap: 0.15, height: 200, showlegend: false,
        margin: { l: 60, r: 10, t: 6, b: 36 },
        xaxis: { title: { text: "layer" } },
        yaxis: { title: { text: p.unit }, rangemode: "tozero" },
      });
    }

    async function render(data) {
      if (data.config_error) useConfig(""); // a config that could not be read: its message is shown, the config forgotten
      await renderLayers(data);
      const ticks = data.options.context_ticks;
      const colors = ["#5c6bc0", "#ef6c00", "#26a69a", "#d81b60", "#8d6e63"];
      const traces = data.curve.series.map((s, i) => ({
        type: "scatter",
        mode: "lines",
        name: s.name,
        x: data.curve.contexts,
        y: s.gib,
        hovertext: data.view.hover.curve[i],
        hovertemplate: "%{hovertext}<extra>%{fullData.name}</extra>",
        line: { color: colors[i % colors.length], width: s.chosen ? 3.5 : 1.8, dash: s.chosen ? "solid" : "dot" },
      }));
      await kvlab.kit.plot(
        root,
        plot,
        traces,
        {
          margin: { l: 60, r: 10, t: 10, b: 50 },
          height: 360,
          xaxis: { type: "log", title: { text: "context (tokens, log scale)" }, tickvals: ticks.values, ticktext: ticks.labels },
          yaxis: { title: { text: data.view.curve_axis }, rangemode: "tozero" },
          legend: { orientation: "h", y: -0.25 },
          shapes: [{ type: "line", xref: "x", yref: "paper", x0: data.params.context, x1: data.params.context, y0: 0, y1: 1,
            line: { color: kvlab.kit.TEXT, width: 1, dash: "dash" } }],
        }
      );
    }

    syncKvOptions();
    const loop = ctx.form("kv_memory_figure", {
      read: readForm,
      sync: (data) => ({ ...data.params, context_step: data.context_step }),
      draw: render,
    });

    configForm.addEventListener("submit", (ev) => {
      ev.preventDefault();
      try {
        kvlab.checkInputs({ config: configArea.value }); // size and nesting, before Python sees it
      } catch (err) {
        configError.textContent = `Could not read this config.json: ${err.message}.`;
        configError.hidden = false;
        ctx.say("Not computed: the config.json was refused (below). The figure is still the last one computed.");
        return;
      }
      useConfig(configArea.value); // Python reads it: a bad one comes back as a message naming the field
      loop.update();
    });
    /* One file from the Hub: its text, or what went wrong in Python's words (kv_memory_figure's hub_status). */
    async function hubFile(url, missing) {
      let reply;
      try {
        reply = await fetch(url, { credentials: "omit", redirect: "follow" });
      } catch {
        return { status: "unreachable" };
      }
      if (reply.status === 401 || reply.status === 403) return { status: "gated" };
      if (reply.status === 404) return { status: missing };
      if (!reply.ok) return { status: "unreachable" };
      const text = await reply.text();
      if (new TextEncoder().encode(text).length > kvlab.inputLimits.textBytes) return { status: "too-big" };
      return { status: "ok", text };
    }
    hubForm.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      let plan;
      try {
        plan = await kvlab.call("kv_memory_hub", { repo: hubForm.repo.value });
      } catch (err) {
        configError.textContent = err.message; // Python names the field: "model id ...: write it as org/name"
        configError.hidden = false;
        return;
      }
      configError.hidden = true;
      hubButton.disabled = true;
      ctx.say(`Fetching ${plan.repo}'s config.json and index from the Hub…`);
      try {
        const cfg = await hubFile(plan.config_url, "missing");
        if (cfg.status !== "ok") {
          useConfig("", { hub: plan.repo, hub_status: cfg.status });
        } else {
          const idx = await hubFile(plan.index_url, "no-index");
          configArea.value = cfg.text;
          useConfig(cfg.text, { hub: plan.repo, hub_status: idx.status, index: idx.text || "" });
        }
        await loop.update();
      } finally {
        hubButton.disabled = false;
      }
    });
    configForm.querySelector(".kv-config-clear").addEventListener("click", () => {
      useConfig("");
      configArea.value = "";
      configError.hidden = true;
      loop.update();
    });

    return loop;
  },
});
