/* A quantized cache, measured in the reader's browser: the tiny model (kvlab.generate,
 * onnxruntime-web) generates with its cache stored as fp32, then as each other format
 * fed fp32's tokens (teacher forcing), and answers the door-code chats in every format.
 * JS only gathers the raw measurements (logits per step, cache bytes, answer texts);
 * kvlab.kv_quant_table (Pyodide) derives every number of the table and its strings, and
 * kit.bind fills the template's rows with them.
 * Static figure: kvlab.kv_quant_figure (numpy reference). */
kvlab.register("kv-quant", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const { formats, episodes, n_new: nNew, answer_tokens: answerTokens } = ctx.data;
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
      kvlab.kit.bind(root, { table }); // the template binds table.view (Python's strings)
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
