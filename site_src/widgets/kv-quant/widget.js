/* A quantized cache, measured in the reader's browser: the tiny model (kvlab.generate,
 * onnxruntime-web) generates with its cache stored as fp32, then as each other format
 * fed fp32's tokens (teacher forcing), and answers the door-code chats in every format.
 * JS only gathers the raw measurements (logits per step, cache bytes, answer texts)
 * and renders; kvlab.kv_quant_table (Pyodide) derives every number of the table.
 * Static figure: kvlab.kv_quant_demo (numpy reference). */
kvlab.register("kv-quant", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const caption = root.querySelector('[data-field="caption"]');
    const { formats, episodes, n_new: nNew, answer_tokens: answerTokens } = ctx.data;
    const el = kvlab.kit.el;
    let busy = false;

    async function measure(prompt) {
      const { config } = await ctx.model();
      const generation = {};
      ctx.say(`Generating ${nNew} tokens with an fp32 cache…`);
      const ref = await kvlab.generate({ prompt, maxNewTokens: nNew, kvFormat: "fp32", returnLogits: true });
      for (const fmt of formats) {
        const r = fmt === "fp32" ? ref : (ctx.say(`Reading the same text with a ${fmt} cache…`),
          await kvlab.generate({ prompt, maxNewTokens: nNew, kvFormat: fmt, forceTokens: ref.tokens, returnLogits: true }));
        generation[fmt] = { logits: r.logits.map((row) => Array.from(row)), cache_bytes: r.cacheBytes };
      }
      const recall = [];
      for (const [i, ep] of episodes.entries()) {
        const answers = {};
        for (const fmt of formats) {
          ctx.say(`Door-code chat ${i + 1} of ${episodes.length}, ${fmt} cache…`);
          answers[fmt] = (await kvlab.generate({ prompt: ep.prompt, maxNewTokens: answerTokens, kvFormat: fmt })).text;
        }
        recall.push({ code: ep.code, distance: ep.distance, answers });
      }
      return {
        source: "your browser (onnxruntime-web)",
        config, // the model's config as the runtime has it: kvlab derives the sizes
        prompt, prompt_len: ref.promptLen, generation, recall,
      };
    }

    function render(table) {
      caption.textContent = `Measured in your browser just now (onnxruntime-web): ${table.n_steps} tokens after a ${table.prompt_len}-token prompt, then the door-code chats below.`;
      for (const r of table.rows) {
        const row = root.querySelector(`tr[data-format="${r.format}"]`);
        const set = (col, text) => (row.querySelector(`[data-col="${col}"]`).textContent = text);
        const bytes = row.querySelector('[data-col="bytes"]');
        bytes.replaceChildren(`${r.bytes_per_token.toLocaleString("en-US")} `, el("span", "kv-muted", `(${(r.vs_fp32 * 100).toFixed(1)}%)`));
        set("dlogit", Number(r.max_abs_dlogit.toPrecision(3)).toString());
        set("top1", `${(r.top1_agreement * 100).toFixed(1)}%`);
        set("diverge", r.first_divergence === null ? `never (${table.n_steps} steps)` : `token ${r.first_divergence}`);
        row.querySelectorAll('[data-col="recall"]').forEach((td, i) => {
          const s = r.recall[i];
          const mark = s.correct ? el("span", "kv-kq-ok", "✓") : el("span", "kv-kq-bad", "✗");
          mark.setAttribute("aria-label", s.correct ? "right" : "wrong");
          td.replaceChildren(`${s.said || "–"} `, mark);
        });
      }
      root.dataset.table = JSON.stringify(table);
    }

    async function run(ev) {
      if (ev) ev.preventDefault();
      if (busy) return;
      const prompt = form.prompt.value;
      if (!prompt.trim()) {
        ctx.say("Type a prompt first: the model continues your text.");
        form.prompt.focus();
        return;
      }
      busy = true;
      form.run.disabled = true;
      ctx.setState("loading");
      try {
        const measurements = await measure(prompt);
        ctx.say("Deriving the table (kvlab.kv_quant_table)…");
        render(await ctx.call("kv_quant_table", { measurements }));
        ctx.say(`Measured in your browser: ${formats.length} cache formats, ${episodes.length} door-code chats.`);
        ctx.setState("ready");
      } catch (err) {
        ctx.fail(err);
      } finally {
        busy = false;
        form.run.disabled = false;
      }
    }

    form.addEventListener("submit", run);
    return { activate: () => ctx.model().then(() => { ctx.say("Model loaded: press “Measure in my browser”."); ctx.setState("ready"); }) };
  },
});
