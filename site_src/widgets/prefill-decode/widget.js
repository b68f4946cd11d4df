/* Prefill, then decode, as a sequence diagram: the reader's prompt and reply words →
 * kvlab.prefill_decode_figure (cache lengths from kvlab.cache_phases) → kit.bind fills
 * the template's steps and arrows from the result's view. */
kvlab.register("prefill-decode", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    return ctx.form("prefill_decode_figure", {
      debounce: 200,
      read() {
        if (!form.prompt.value.trim() || !form.replies.value.trim()) {
          ctx.notice("Type a prompt and at least one word for the model to write.");
          return null;
        }
        ctx.notice("");
        return { prompt: form.prompt.value, replies: form.replies.value };
      },
    });
  },
});
