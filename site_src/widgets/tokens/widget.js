/* Text becomes tokens: kvlab.tokenize_demo in Pyodide (the tiny model's tokenizer).
 * kit.bind fills the template (the tokens, their titles and the summary) from Python's result. */
kvlab.register("tokens", {
  mount(root, ctx) {
    const form = root.querySelector("form");
    const compute = ctx.live("tokenize_demo", (data) => kvlab.kit.bind(root, data), () => "Tokenized in your browser by kvlab.tokenize_demo.");
    const update = () => compute({ text: form.text.value });
    form.addEventListener("input", update);
    return { activate: update };
  },
});
