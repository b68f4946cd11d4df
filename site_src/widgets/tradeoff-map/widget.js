/* The trade-off map: three settings → kvlab.tradeoff_map in Pyodide → the grid, the
 * reasons (in numbers, from kvlab's calculators) and the llama-server line. A grid
 * cell is a button: it picks that length and repetition. */
kvlab.register("tradeoff-map", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const form = root.querySelector(".kv-controls");
    const field = (n) => root.querySelector(`[data-field="${n}"]`);

    const compute = ctx.live("tradeoff_map", render, (d) => `Computed in your browser by kvlab.tradeoff_map (${d.params.length} conversation, ${d.params.repetition} repetition, ${d.params.memory} memory).`);
    const update = () => compute({ length: form.length.value, repetition: form.repetition.value, memory: form.memory.value });

    function render(data) {
      const c = data.cell;
      field("memory").textContent = data.options.memory.find((o) => o.key === data.params.memory).label;
      const rows = data.grid.map((row, i) => {
        const tr = kit.el("tr");
        const th = kit.el("th", null, data.options.length[i].label);
        th.scope = "row";
        tr.append(th);
        for (const cell of row) {
          const td = kit.el("td");
          td.dataset.main = cell.main;
          if (cell.length === data.params.length && cell.repetition === data.params.repetition) td.setAttribute("aria-current", "true");
          const b = kit.el("button", "kv-tm-cell", data.techniques[cell.main]);
          b.type = "button";
          b.dataset.length = cell.length;
          b.dataset.repetition = cell.repetition;
          b.setAttribute("aria-label", `${data.options.length[i].label}, repeats ${cell.repetition}: ${cell.helps.map((h) => data.techniques[h]).join(", ")}`);
          td.append(b);
          tr.append(td);
        }
        return tr;
      });
      field("grid").replaceChildren(...rows);
      field("where").textContent = c.text.where;
      field("why").replaceChildren(...Object.entries(data.techniques).map(([key, label]) => {
        const helps = c.helps.includes(key);
        const li = kit.el("li");
        li.dataset.helps = String(helps);
        li.append(kit.el("strong", null, `${label}${helps ? " helps" : ": not needed"}.`), " ", c.why[key]);
        return li;
      }));
      field("server-command").textContent = c.server.command;
    }

    field("grid").addEventListener("click", (ev) => {
      const b = ev.target.closest(".kv-tm-cell");
      if (!b) return;
      form.length.value = b.dataset.length;
      form.repetition.value = b.dataset.repetition;
      update();
    });
    form.addEventListener("input", update);
    return { activate: update };
  },
});
