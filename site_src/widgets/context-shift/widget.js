/* llama.cpp running out of context. State → kvlab.context_shift_view in Pyodide → render. */
kvlab.register("context-shift", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const raster = root.querySelector(".kv-raster");
    raster.hidden = true; // shown with the first live chart; until then the build-time raster stands
    const details = root.querySelector(".kv-numbers");
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const RANGES = ["n_ctx", "prompt_len", "n_generate"];
    const NAMES = { n_ctx: "n_ctx", prompt_len: "prompt tokens", n_generate: "tokens to generate", n_keep: "n_keep" };
    const COLORS = ["rgba(0,0,0,0)", "#ef5350", "#5c6bc0", "#26a69a"];
    const LABELS = ["not written yet", "discarded", "seen by the model", "seen, protected by n_keep"];
    let data = ctx.data;

    function readForm() {
      for (const k of RANGES) form[`${k}-out`].value = form[k].value;
      const keep = Number(form.n_keep.value);
      const args = { mode: form.mode.value, n_keep: form.n_keep.value.trim() === "" || !Number.isFinite(keep) ? data.params.n_keep : keep };
      for (const k of RANGES) args[k] = parseInt(form[k].value, 10);
      return args;
    }

    // latest input wins (ctx.live): Python clamps out-of-range input, so show what was really computed
    const compute = ctx.live(
      "context_shift_view",
      async (result) => {
        data = result;
        ctx.reportClamped(data, NAMES);
        for (const k of RANGES) form[`${k}-out`].value = form[k].value;
        await render();
      },
      (data) => `Computed in your browser by kvlab.context_shift_view (n_ctx = ${data.n_ctx}, ${data.mode}).`
    );
    const update = () => compute(readForm());

    function renderText() {
      for (const key of ["outcome", "final_n_past", "n_text", "final_visible", "n_keep"]) field(key).textContent = data.text[key];
      field("server-command").textContent = data.server.command;
      field("server-flags").replaceChildren(...data.server.flags.map((f) => {
        const li = document.createElement("li");
        li.append(Object.assign(document.createElement("code"), { textContent: f.flag }), `: ${f.means}`);
        return li;
      }));
      field("shifts").replaceChildren(...data.shifts.map((s) => Object.assign(document.createElement("li"), { textContent: s.text })));
      field("steps").replaceChildren(
        ...data.steps.map((s) => {
          const tr = document.createElement("tr");
          tr.append(Object.assign(document.createElement("th"), { scope: "row", textContent: String(s.step) }));
          for (const v of [s.n_past_after, s.n_discarded, s.visible_text]) tr.append(Object.assign(document.createElement("td"), { textContent: String(v) }));
          return tr;
        })
      );
    }

    async function render() {
      renderText();
      const Plotly = await kvlab.plotly();
      // the build-time raster stays up until the live chart replaces it (no blank box in between)
      raster.hidden = false;
      const still = root.querySelector(".kv-static-raster");
      if (still) still.style.display = "none";
      const style = getComputedStyle(root);
      const c0 = COLORS[0];
      const axis = { zeroline: false, showgrid: false };
      const rows = data.grid.length;
      const small = data.n_text <= 80 && rows <= 80;
      const shapes = data.shifts.map((s) => ({ type: "line", xref: "paper", x0: 0, x1: 1, y0: s.step - 0.5, y1: s.step - 0.5, line: { color: "#ffb300", width: 1.5, dash: "dot" } }));
      Plotly.react(
        raster,
        [{
          type: "heatmap",
          z: data.grid,
          zmin: 0,
          zmax: 3,
          colorscale: [[0, c0], [0.1667, c0], [0.1667, COLORS[1]], [0.5, COLORS[1]], [0.5, COLORS[2]], [0.8333, COLORS[2]], [0.8333, COLORS[3]], [1, COLORS[3]]],
          showscale: false,
          xgap: small ? 1 : 0,
          ygap: small ? 1 : 0,
          customdata: data.grid.map((row) => row.map((v) => LABELS[v])),
          hovertemplate: "step %{y}, text token %{x}: %{customdata}<extra></extra>",
        }],
        {
          margin: { l: 55, r: 10, t: 10, b: 45 },
          height: Math.min(520, Math.max(300, 60 + rows * 7)),
          paper_bgcolor: c0,
          plot_bgcolor: c0,
          font: { color: style.color, family: style.fontFamily },
          shapes,
          xaxis: { ...axis, title: { text: "token of the text (prompt, then generated)" } },
          yaxis: { ...axis, title: { text: "step (0 = prompt)" }, autorange: "reversed" },
        },
        { displayModeBar: false, responsive: true }
      );
      details.open = false;
    }

    form.addEventListener("input", update);
    return { activate: () => update() };
  },
});
