/* Engine log, explained. State → kvlab.engine_log_figure in Pyodide → render.
 * Every figure, verdict and sentence comes from Python; JS handles input and builds the tables. */
kvlab.register("engine-log", {
  mount(root, ctx) {
    const form = root.querySelector("form.kv-controls");
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const errorBox = field("error");
    let data = ctx.data;

    const el = (tag, text, attrs) => {
      const e = document.createElement(tag);
      if (text !== undefined && text !== null) e.textContent = text;
      Object.entries(attrs || {}).forEach(([k, v]) => e.setAttribute(k, v));
      return e;
    };
    const code = (text) => {
      const td = el("td");
      td.append(el("code", text));
      return td;
    };

    function readState(useLog) {
      return {
        example: form.example.value,
        model: form.model.value,
        log: useLog ? form.log.value : "",
        config: useLog ? form.config.value : "",
        settings: useLog ? form.settings.value : "",
      };
    }

    const compute = ctx.live(
      "engine_log_figure",
      (result) => {
        data = result;
        render();
      },
      (d) => d.status
    );

    function renderChecks() {
      field("checks").tBodies[0].replaceChildren(
        ...data.checks.map((c) => {
          const head = el("th", c.figure, { scope: "row" });
          if (c.line) head.append(" ", el("span", `(line ${c.line})`, { class: "kv-muted" }));
          const tr = el("tr", null, { "data-status": c.status });
          tr.append(head, el("td", c.status_label), code(c.logged), code(c.rebuilt));
          return tr;
        })
      );
      field("details").replaceChildren(
        ...data.checks.filter((c) => c.terms.length || c.why).map((c) => {
          const box = el("details", null, { class: "kv-numbers" });
          if (c.status === "differs") box.open = true;
          box.append(el("summary", `${c.figure}: ${c.status_label}`));
          if (c.terms.length) {
            const wrap = el("div", null, { class: "kv-table-wrap", tabindex: "0" });
            const table = el("table", null, { class: "kv-table kv-terms" });
            const head = el("tr");
            ["term", "logged", "rebuilt", "how"].forEach((h) => head.append(el("th", h, { scope: "col" })));
            table.append(el("thead"), el("tbody"));
            table.tHead.append(head);
            c.terms.forEach((t) => {
              const tr = el("tr", null, { "data-ok": t.ok ? "true" : "false" });
              tr.append(el("th", t.term, { scope: "row" }), el("td", t.logged), el("td", t.rebuilt), el("td", t.how));
              table.tBodies[0].append(tr);
            });
            wrap.append(table);
            box.append(wrap);
          }
          if (c.why) box.append(el("p", c.why, { class: "kv-why" }));
          return box;
        })
      );
    }

    function render() {
      field("model").textContent = data.model_name;
      field("engine").textContent = data.engine || "no engine recognised";
      field("summary").textContent = data.summary;
      const fromExample = data.params.source === "example";
      field("example-source").hidden = !fromExample;
      if (fromExample) {
        const link = field("example-link");
        link.href = data.example.source;
        link.textContent = data.example.label;
        link.nextSibling.textContent = `. ${data.example.note}`;
      }
      errorBox.textContent = data.error || "";
      errorBox.hidden = !data.error;
      renderChecks();
      field("settings").replaceChildren(...data.settings.map((s) => el("li", `${s.name} = ${s.value} (${s.from})`)));
      field("notes").replaceChildren(...data.notes.map((n) => el("li", n)));
    }

    /* Picking an example puts its log (and config, and model) in the form and explains it as published. */
    form.example.addEventListener("change", () => {
      const e = data.examples.find((x) => x.id === form.example.value);
      form.log.value = e.log;
      form.config.value = e.config || "";
      form.settings.value = "";
      if (e.model) form.model.value = e.model;
      compute(readState(false));
    });
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      try {
        kvlab.checkInputs({ log: form.log.value, config: form.config.value, settings: form.settings.value }); // size and nesting, before Python
      } catch (err) {
        errorBox.textContent = `Could not read this log: ${err.message}.`;
        errorBox.hidden = false;
        return;
      }
      compute(readState(true));
    });

    return { activate: () => compute(readState(false)) };
  },
});
