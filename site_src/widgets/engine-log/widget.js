/* Engine log, explained. State → kvlab.engine_log_figure in Pyodide → render.
 * Every figure, verdict and sentence comes from Python; kit.bind fills the template's tables. */
kvlab.register("engine-log", {
  mount(root, ctx) {
    const form = root.querySelector("form.kv-controls");
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const errorBox = field("error");

    function readState(useLog) {
      return {
        example: form.example.value,
        model: form.model.value,
        log: useLog ? form.log.value : "",
        config: useLog ? form.config.value : "",
        settings: useLog ? form.settings.value : "",
      };
    }

    // a pasted log is read when the reader submits it, not at every key (read: no call on input)
    const loop = ctx.form("engine_log_figure", {
      read: (ev) => (ev ? null : readState(false)),
    });

    /* Picking an example puts its log (and config, and model) in the form and explains it as published. */
    form.example.addEventListener("change", () => {
      const e = loop.data.examples.find((x) => x.id === form.example.value);
      form.log.value = e.log;
      form.config.value = e.config || "";
      form.settings.value = "";
      if (e.model) form.model.value = e.model;
      loop.call(readState(false));
    });
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      try {
        kvlab.checkInputs({ log: form.log.value, config: form.config.value, settings: form.settings.value }); // size and nesting, before Python
      } catch (err) {
        errorBox.textContent = `Could not read this log: ${err.message}.`;
        errorBox.hidden = false;
        ctx.say("Not computed: the pasted text was refused (below). The checks are still the last ones computed.");
        return;
      }
      loop.call(readState(true));
    });

    return loop;
  },
});
