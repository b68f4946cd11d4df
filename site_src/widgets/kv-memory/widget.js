/* KV cache memory. State → kvlab.kv_memory_figure in Pyodide → render.
 * Every number and every formatted size comes from Python; JS handles input and draws. */
kvlab.register("kv-memory", {
  mount(root, ctx) {
    const form = root.querySelector("form.kv-controls");
    const plot = root.querySelector(".kv-plot");
    const layerPlot = root.querySelector(".kv-layer-plot");
    const configForm = root.querySelector(".kv-config-form");
    const configArea = configForm.querySelector("textarea");
    const configError = configForm.querySelector(".kv-error");
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const steps = ctx.data.options.context_steps;

    let data = ctx.data;
    let config = ""; // the pasted config.json, while it is the one shown

    const cell = (tag, text, title) => {
      const el = document.createElement(tag);
      el.textContent = text;
      if (title) el.title = title;
      if (tag === "th") el.scope = "row";
      return el;
    };
    const row = (cells) => {
      const tr = document.createElement("tr");
      tr.append(...cells);
      return tr;
    };

    /* Cache types an engine does not take are disabled (Python would refuse them). */
    function syncKvOptions() {
      const mode = form.mode.value;
      for (const opt of form.kv.options) opt.disabled = !opt.dataset.modes.split(" ").includes(mode);
      if (form.kv.selectedOptions[0].disabled) form.kv.value = "f16";
    }

    /* The form's values as kvlab.kv_memory_figure's arguments. The slider picks one of Python's
     * context steps; the number field is sent as typed (Python clamps it and says so). */
    function readForm(ev) {
      syncKvOptions();
      if (ev && ev.target === form.context_step) form.context.value = steps[parseInt(form.context_step.value, 10)];
      const c = parseInt(form.context.value, 10);
      const n = parseInt(form.n_seq.value, 10);
      return {
        model: form.model.value,
        context: Number.isFinite(c) ? c : data.params.context,
        kv: form.kv.value,
        mode: form.mode.value,
        n_seq: Number.isFinite(n) ? n : data.params.n_seq,
        config,
      };
    }

    const compute = ctx.live(
      "kv_memory_figure",
      async (result) => {
        data = result;
        // A config that could not be read comes back as a message naming the field, with the
        // catalogue model's figure: show the message, forget the config.
        configError.textContent = data.config_error || "";
        configError.hidden = !data.config_error;
        if (data.config_error) config = "";
        ctx.reportClamped(data, { context: "context", n_seq: "sequences" });
        form.context.value = data.params.context;
        form.context_step.value = data.context_step;
        form.context_step.setAttribute("aria-valuetext", data.context_text);
        form.n_seq.value = data.params.n_seq;
        await render();
      },
      (data) => data.status
    );
    const update = (args) => compute(args);

    function renderText() {
      const r = data.result;
      const set = (name, text, title) => {
        const el = field(name);
        el.textContent = text;
        if (title !== undefined) el.title = title;
      };
      const g = r.growth;
      const head = g.bounded ? g.growth_per_token : r.per_token;
      set("per-token", head.human, head.exact);
      set("per-token-text", g.bounded ? g.text : "per token");
      set("model", r.model);
      set("kv", data.params.kv);
      set("formula", g.bounded ? g.growth_formula : r.formula);
      set("per-token-exact", head.exact);
      set("context", data.context_text);
      set("n-seq", data.sequences_text);
      field("context-flag").hidden = !data.context_flag;
      set("context-flag", data.context_flag ? data.context_flag.message : "");
      set("total", r.total.human, r.total.exact);
      set("total-exact", r.total.exact);
      set("mode-label", data.mode_label);
      field("kinds").tBodies[0].replaceChildren(
        ...r.kinds.map((k) => row([cell("th", k.label), cell("td", k.layers), cell("td", k.holds),
          cell("td", k.per_token.human, k.per_token.exact), cell("td", k.total.human, k.total.exact)]))
      );
      field("mla").hidden = !r.mla_expanded_per_token;
      set("mla-expanded", r.mla_expanded_per_token ? r.mla_expanded_per_token.human : "");
      field("log-box").hidden = !r.log_lines.length;
      set("log", r.log_lines.join("\n"));
      field("notes").replaceChildren(...r.notes.concat(r.engine_notes).map((n) => cell("li", n)));
      const sv = data.server;
      set("server-text", sv.text);
      set("server-command", sv.command || "");
      field("server-command").parentElement.hidden = !sv.command;
      field("server-flags").replaceChildren(...sv.flags.map((f) => {
        const li = document.createElement("li");
        const code = document.createElement("code");
        code.textContent = f.flag;
        li.append(code, `: ${f.means}`);
        return li;
      }));
      const info = data.model_info;
      field("model-note").hidden = !info || info.confirmed;
      set("model-note", info && !info.confirmed ? `Not confirmed: ${info.note}` : "");

      const curve = field("curve");
      const curveHead = curve.tHead.rows[0];
      curveHead.replaceChildren(cell("th", "tokens"), ...data.curve.series.map((s) => cell("th", s.name)));
      [...curveHead.cells].forEach((c) => (c.scope = "col"));
      curve.tBodies[0].replaceChildren(
        ...data.curve.contexts.map((c, i) =>
          row([cell("th", c.toLocaleString("en-US")), ...data.curve.series.map((s) => cell("td", s.human[i], `${s.bytes[i].toLocaleString("en-US")} B`))])
        )
      );
      field("kind-table").tBodies[0].replaceChildren(
        ...data.kinds.map((k) => row([cell("th", k.kind_label), cell("td", k.model),
          cell("td", k.per_token.human, `${k.per_token.exact}; ${k.formula}`), cell("td", k.total.human, k.total.exact)]))
      );
    }

    /* hybrid: a Falcon-H1 layer, attention and a Mamba-2 state together; none: an MLP-only layer (caches nothing) */
    const LAYER_COLORS = { full: "#5c6bc0", sliding: "#ef6c00", linear: "#26a69a", mla: "#d81b60", hybrid: "#7e57c2", none: "#9e9e9e" };

    /* The layer map: per layer, what it needs (coloured by kind) and what the engine adds on top (grey). */
    function renderLayers() {
      const lm = data.layer_map;
      field("layer-engine").textContent = lm.engine;
      field("layer-text").textContent = lm.text;
      field("layer-legend").replaceChildren(
        ...lm.kinds.map((k) => {
          const li = document.createElement("li");
          const sw = document.createElement("span");
          sw.className = `kv-swatch kv-layer-${k.kind}`;
          const need = document.createElement("strong");
          need.textContent = k.ideal.human;
          need.title = k.ideal.exact;
          const alloc = document.createElement("strong");
          alloc.textContent = k.allocated.human;
          alloc.title = k.allocated.exact;
          li.append(sw, `${k.label}, ${k.layers_text}: needs `, need, ", allocated ", alloc);
          return li;
        }),
        (() => {
          const li = document.createElement("li");
          const sw = document.createElement("span");
          sw.className = "kv-swatch kv-layer-padding";
          const pad = document.createElement("strong");
          pad.dataset.field = "layer-padding";
          pad.textContent = lm.padding.human;
          pad.title = lm.padding.exact;
          li.append(sw, "allocated beyond the need: ", pad);
          return li;
        })()
      );
      const p = lm.plot;
      return kvlab.kit.plot(root, layerPlot, [
        { type: "bar", name: "needed", x: p.x, y: p.needed, text: p.hover, hoverinfo: "text", textposition: "none",
          marker: { color: p.kind.map((k) => LAYER_COLORS[k]) } },
        { type: "bar", name: "allocated beyond the need", x: p.x, y: p.padding, text: p.hover, hoverinfo: "text",
          textposition: "none", marker: { color: "rgba(128,128,128,0.45)" } },
      ], {
        barmode: "stack", bargap: 0.15, height: 200, showlegend: false,
        margin: { l: 60, r: 10, t: 6, b: 36 },
        xaxis: { title: { text: "layer" } },
        yaxis: { title: { text: p.unit }, rangemode: "tozero" },
      });
    }

    async function render() {
      renderText();
      await renderLayers();
      const ticks = data.options.context_ticks;
      const colors = ["#5c6bc0", "#ef6c00", "#26a69a", "#d81b60", "#8d6e63"];
      const traces = data.curve.series.map((s, i) => ({
        type: "scatter",
        mode: "lines",
        name: s.name,
        x: data.curve.contexts,
        y: s.gib,
        customdata: s.human,
        hovertemplate: "%{x:,} tokens: %{customdata}<extra>" + s.name + "</extra>",
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
          yaxis: { title: { text: `KV cache, GiB (${data.params.kv}, ${data.mode_label.split(" (")[0]})` }, rangemode: "tozero" },
          legend: { orientation: "h", y: -0.25 },
          shapes: [{ type: "line", xref: "x", yref: "paper", x0: data.params.context, x1: data.params.context, y0: 0, y1: 1,
            line: { color: kvlab.kit.TEXT, width: 1, dash: "dash" } }],
        }
      );
    }

    form.addEventListener("input", (ev) => update(readForm(ev)));
    configForm.addEventListener("submit", (ev) => {
      ev.preventDefault();
      try {
        kvlab.checkInputs({ config: configArea.value }); // size and nesting, before Python sees it
      } catch (err) {
        configError.textContent = `Could not read this config.json: ${err.message}.`;
        configError.hidden = false;
        return;
      }
      config = configArea.value; // Python reads it: a bad one comes back as a message naming the field
      update(readForm());
    });
    configForm.querySelector(".kv-config-clear").addEventListener("click", () => {
      config = "";
      configArea.value = "";
      configError.hidden = true;
      update(readForm());
    });

    syncKvOptions();
    return { activate: () => update(readForm()) };
  },
});
