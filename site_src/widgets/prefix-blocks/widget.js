/* Two requests sharing a prefix, cut into blocks. State → kvlab.prefix_blocks in Pyodide → render. */
kvlab.register("prefix-blocks", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const rowsEl = root.querySelector('[data-field="rows"]');
    const NAMES = { prefix_len: "shared prefix", suffix_len: "own tokens", block_size: "block size" };
    let data = ctx.data;

    function readForm() {
      form["prefix_len-out"].value = form.prefix_len.value;
      const s = Number(form.suffix_len.value);
      return {
        prefix_len: parseInt(form.prefix_len.value, 10),
        suffix_len: form.suffix_len.value.trim() === "" || !Number.isFinite(s) ? data.params.suffix_len : s,
        block_size: parseInt(form.block_size.value, 10),
      };
    }

    // latest input wins (ctx.live): Python clamps out-of-range input, so show what was really computed
    const compute = ctx.live(
      "prefix_blocks",
      async (result) => {
        data = result;
        form["prefix_len-out"].value = data.params.prefix_len;
        ctx.reportClamped(data, NAMES);
        await render();
      },
      (data) => `Computed in your browser by kvlab.prefix_blocks (block size ${data.params.block_size}).`
    );
    const update = () => compute(readForm());

    function render() {
      root.querySelectorAll(".kv-sentence [data-field]").forEach((el) => {
        if (el.dataset.field in data.text) el.textContent = data.text[el.dataset.field];
      });
      const rows = data.requests.map((r, i) => {
        const row = document.createElement("div");
        row.className = "kv-block-row";
        const label = Object.assign(document.createElement("span"), { className: "kv-block-label", textContent: `Request ${i + 1}` });
        const list = document.createElement("ol");
        list.className = "kv-blocks";
        list.setAttribute("aria-label", `Request ${i + 1}: ${r.n_tokens} tokens in ${r.blocks.length} blocks`);
        list.style.setProperty("--prefix", `${(100 * data.params.prefix_len) / r.n_tokens}%`);
        for (const b of r.blocks) {
          const li = document.createElement("li");
          li.className = "kv-block";
          li.dataset.status = b.status;
          li.style.flexGrow = String(b.end - b.start);
          const what = `tokens ${b.start}–${b.end - 1}: ${b.status}`;
          li.title = what;
          li.append(Object.assign(document.createElement("span"), { className: "kv-visually-hidden", textContent: what }));
          list.append(li);
        }
        row.append(label, list);
        return row;
      });
      rowsEl.replaceChildren(...rows);
    }

    form.addEventListener("input", update);
    return { activate: () => update() };
  },
});
