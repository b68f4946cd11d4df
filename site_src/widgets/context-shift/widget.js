/* llama.cpp running out of context. State → kvlab.context_shift_view in Pyodide → render.
 * The raster is the build's SVG, redrawn in place (kvlab.kit.raster): no chart library. */
kvlab.register("context-shift", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const raster = root.querySelector(".kv-static-raster");
    const details = root.querySelector(".kv-numbers");
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const RANGES = ["n_ctx", "prompt_len", "n_generate"];
    const NAMES = { n_ctx: "n_ctx", prompt_len: "prompt tokens", n_generate: "tokens to generate", n_keep: "n_keep" };
    const LABELS = ["not written yet", "discarded", "seen by the model", "seen, protected by n_keep"];
    const cellTitle = (row, first, last, v) => `step ${row}, ${first === last ? `text token ${first}` : `text tokens ${first}–${last}`}: ${LABELS[v]}`;
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
      // a shift at step s: a line between rows s - 1 and s (in the gap between them)
      kvlab.kit.raster(raster, data.grid, {
        prefix: "kv-cs",
        lines: data.shifts.map((s) => ({ y: s.step - 0.05, className: "kv-raster-shift" })),
        title: cellTitle,
      });
      field("raster-rows").textContent = data.grid.length - 1;
      field("raster-cols").textContent = data.grid.length ? data.grid[0].length - 1 : 0;
      details.open = false;
    }

    form.addEventListener("input", update);
    return { activate: () => update() };
  },
});
