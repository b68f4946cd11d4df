/* Text becomes tokens: kvlab.tokens_figure in Pyodide (the tiny model's tokenizer).
 * kit.bind fills the template (the tokens, their titles and the summary) from Python's result. */
kvlab.register("tokens", {
  mount(root, ctx) {
    const form = root.querySelector("form");
    return ctx.form("tokens_figure", {
      read: () => ({ text: form.text.value }),
    });
  },
});
