/* Text becomes tokens: kvlab.tokenize_demo in Pyodide (the tiny model's tokenizer).
 * kit.bind fills the template (the tokens, their titles and the summary) from Python's result. */
kvlab.register("tokens", {
  mount(root, ctx) {
    const form = root.querySelector("form");
    return ctx.form("tokenize_demo", {
      read: () => ({ text: form.text.value }),
      describe: () => "Tokenized in your browser by kvlab.tokenize_demo.",
    });
  },
});
