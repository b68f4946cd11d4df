/* Three requests through a prefix cache, case by case. State → kvlab.prefix_cases in
 * Pyodide → render. The requests arrive one after another (a short entrance, none
 * under reduced motion); every number comes from Python. */
kvlab.register("prefix-cases", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const form = root.querySelector(".kv-controls");
    const list = root.querySelector('[data-field="requests"]');
    const field = (n) => root.querySelector(`[data-field="${n}"]`);
    const NAMES = { shared_len: "repeated part", own_len: "new part", block_size: "block size" };
    let data = ctx.data;

    const readForm = () => {
      form["shared_len-out"].value = form.shared_len.value;
      form["own_len-out"].value = form.own_len.value;
      return { case: form.case.value, shared_len: Number(form.shared_len.value), own_len: Number(form.own_len.value), block_size: Number(form.block_size.value) };
    };

    const compute = ctx.live(
      "prefix_cases",
      (result) => {
        const caseChanged = result.params.case !== data.params.case;
        data = result;
        ctx.reportClamped(data, NAMES);
        render(caseChanged);
      },
      (d) => `Computed in your browser by kvlab.prefix_cases (${d.cases.find((c) => c.key === d.params.case).label.toLowerCase()}).`
    );

    function render(animate) {
      field("what").textContent = data.what;
      field("summary").textContent = data.text.summary;
      list.replaceChildren(...data.requests.map((r, i) => {
        const box = kit.el("div", "kv-pc-request");
        box.append(kit.el("p", "kv-pc-label", `Request ${i + 1} · ${r.n_tokens} tokens · reused: ${r.radix_reused} token-granular, ${r.blocks_reused} in blocks`));
        const segs = kit.el("ol", "kv-pc-segments");
        segs.setAttribute("aria-label", `Request ${i + 1}: its parts`);
        for (const s of r.segments) {
          const li = kit.el("li", "kv-pc-seg");
          li.dataset.kind = s.kind;
          li.dataset.reuse = s.reuse;
          li.style.flexGrow = String(s.tokens);
          li.append(kit.el("span", null, s.label), " ", kit.el("small", null, `${s.reused}/${s.tokens}`));
          li.title = `${s.label}: ${s.reused} of ${s.tokens} tokens reused`;
          segs.append(li);
        }
        const blocks = kit.el("ol", "kv-pc-blocks");
        blocks.setAttribute("aria-hidden", "true");
        for (const b of r.blocks) {
          const li = kit.el("li", "kv-block");
          li.dataset.status = b.status;
          li.style.flexGrow = String(b.tokens);
          blocks.append(li);
        }
        box.append(segs, blocks);
        return box;
      }));
      list.classList.remove("kv-pc-enter");
      if (animate && !kit.reducedMotion()) {
        void list.offsetWidth;
        list.classList.add("kv-pc-enter");
      }
    }

    form.addEventListener("input", () => compute(readForm()));
    return { activate: () => compute(readForm()) };
  },
});
