/* Three requests through a prefix cache, case by case. State → kvlab.prefix_cases in
 * Pyodide → kit.bind fills the template's requests from Python's result. The requests
 * arrive one after another when the case changes (a short entrance, none under reduced motion). */
kvlab.register("prefix-cases", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const form = root.querySelector(".kv-controls");
    const list = root.querySelector('[data-field="requests"]');
    let data = ctx.data;

    const compute = ctx.live(
      "prefix_cases",
      (result) => {
        const caseChanged = result.params.case !== data.params.case;
        data = result;
        kit.bind(root, data);
        list.classList.remove("kv-pc-enter");
        if (caseChanged && !kit.reducedMotion()) {
          void list.offsetWidth; // restart the animation
          list.classList.add("kv-pc-enter");
        }
      },
      (d) => `Computed in your browser by kvlab.prefix_cases (${d.view.case}).`
    );
    const update = () => {
      form["shared_len-out"].value = form.shared_len.value;
      form["own_len-out"].value = form.own_len.value;
      return compute(kit.readForm(form, data.params));
    };

    form.addEventListener("input", update);
    return { activate: update };
  },
});
