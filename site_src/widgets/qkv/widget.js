/* Q, K and V of a real sentence. State → kvlab.qkv_figure in Pyodide (a new sentence, layer or head)
 * → kit.bind fills the template's vectors. Picking a query token needs no call: Python computed
 * every token's reading (data.queries); the pick binds that one into the reading's scope. */
kvlab.register("qkv", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const form = root.querySelector("form.kv-controls");
    const scope = root.querySelector(".kv-qkv-read");
    let query = ctx.data.query;

    // the chosen token's row, the rows it cannot read yet (the causal mask), its button pressed
    function mark() {
      root.querySelectorAll("tr[data-index]").forEach((tr) => {
        const j = Number(tr.dataset.index);
        tr.toggleAttribute("data-current", j === query);
        tr.toggleAttribute("data-future", j > query);
      });
      root.querySelectorAll(".kv-qkv-pick").forEach((b) => b.setAttribute("aria-pressed", String(Number(b.dataset.index) === query)));
    }
    function show(i) {
      query = i;
      scope.dataset.bindScope = `queries.${i}`;
      kit.bind(scope, loop.data.queries[i]);
      mark();
    }

    const fields = (data) => ({ sentence: data.sentence, layer: data.layer, head: data.head });
    const loop = ctx.form("qkv_figure", {
      read: (ev, data) => kit.readForm(form, fields(data)),
      sync: fields,
      bind: false, // the reading's scope follows the chosen token first
      draw(data) {
        query = Math.min(query, data.tokens.length - 1);
        scope.dataset.bindScope = `queries.${query}`;
        kit.bind(root, data);
        mark();
      },
    });
    root.addEventListener("click", (ev) => {
      const b = ev.target.closest(".kv-qkv-pick");
      if (b) show(Number(b.dataset.index));
    });
    mark();
    return loop;
  },
});
