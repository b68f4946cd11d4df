/* Three requests through a prefix cache, case by case. State → kvlab.prefix_cases_figure in
 * Pyodide → kit.bind fills the template's requests from Python's result. The requests
 * arrive one after another when the case changes (a short entrance, none under reduced motion). */
kvlab.register("prefix-cases", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const list = root.querySelector('[data-field="requests"]');
    return ctx.form("prefix_cases_figure", {
      draw(data, before) {
        list.classList.remove("kv-pc-enter");
        if (data.params.case !== before.params.case && !kit.reducedMotion()) {
          void list.offsetWidth; // restart the animation
          list.classList.add("kv-pc-enter");
        }
      },
    });
  },
});
