/* Text becomes tokens: kvlab.tokenize_demo in Pyodide (the tiny model's tokenizer). */
kvlab.register("tokens", {
  mount(root, ctx) {
    const form = root.querySelector("form");
    const field = (n) => root.querySelector(`[data-field="${n}"]`);
    function render(data) {
      field("tokens").replaceChildren(
        ...data.tokens.map((t) => {
          const span = document.createElement("span");
          span.className = "kv-token";
          span.title = `token id ${t.id}, ${t.bytes} byte${t.bytes === 1 ? "" : "s"}`;
          span.textContent = t.text;
          const sub = document.createElement("sub");
          sub.textContent = t.id;
          span.appendChild(sub);
          return span;
        })
      );
      field("summary").textContent =
        `${data.n_chars} characters, ${data.n_bytes} bytes of UTF-8 → ${data.n_tokens} tokens (${data.bytes_per_token} bytes per token) from a vocabulary of ${data.vocab_size}.` +
        (data.truncated ? " Only the first 2,000 characters are shown." : "");
    }

    const compute = ctx.live("tokenize_demo", render, () => "Tokenized in your browser by kvlab.tokenize_demo.");
    const update = () => compute({ text: form.text.value });
    form.addEventListener("input", update);
    return { activate: update };
  },
});
