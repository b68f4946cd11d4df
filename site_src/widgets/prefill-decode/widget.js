/* Prefill, then decode, as a sequence diagram: the reader's prompt and reply words →
 * kvlab.prefill_decode_sequence (cache lengths from kvlab.cache_phases) → the diagram. */
kvlab.register("prefill-decode", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const form = root.querySelector(".kv-controls");
    const seq = root.querySelector('[data-field="seq"]');
    const heads = seq.querySelector(".kv-seq-heads");
    const COL = { input: 1, model: 2, cache: 3 };
    let timer = null;

    const compute = ctx.live("prefill_decode_sequence", (data) => {
      const steps = data.steps.map((s) => {
        const step = kit.el("div", "kv-seq-step");
        step.setAttribute("role", "listitem");
        step.dataset.phase = s.phase;
        step.append(kit.el("p", "kv-seq-note", s.note));
        for (const m of s.messages) {
          const msg = kit.el("div", "kv-seq-msg");
          msg.dataset.from = COL[m.from];
          msg.dataset.to = COL[m.to];
          if (m.reply) msg.dataset.reply = "true";
          const arrow = kit.el("span", "kv-seq-arrow");
          arrow.setAttribute("aria-hidden", "true");
          msg.append(kit.el("span", "kv-seq-text", m.text), arrow, kit.el("span", "kv-sr-only", `${m.from} to ${m.to}`));
          step.append(msg);
        }
        return step;
      });
      seq.replaceChildren(heads, ...steps);
    }, (d) => `Computed in your browser by kvlab.prefill_decode_sequence: ${d.steps.length} steps.`);

    function update() {
      if (!form.prompt.value.trim() || !form.replies.value.trim()) {
        ctx.notice("Type a prompt and at least one word for the model to write.");
        return;
      }
      ctx.notice("");
      return compute({ prompt: form.prompt.value, replies: form.replies.value });
    }
    form.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(update, 200);
    });
    return { activate: update };
  },
});
