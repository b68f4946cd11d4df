/* One forward pass of the tiny model (onnxruntime-web): the top next tokens.
 * Static figure: kvlab.next_token_figure, the numpy reference of the same weights.
 * `view` is the JS twin of kvlab.widgets.tokens.next_token_view (the template's):
 * the model's numbers in the shape of next_token_figure's result → the bound strings.
 * A prompt longer than the model's context is cut from the front, and the
 * widget says so in a note that stays; an empty prompt clears the chart. */
kvlab.register("next-token", {
  view: (data) => ({ n_tokens: data.n_tokens, top: data.top.map((t) => ({ text: t.text, p: kvlab.kit.fixed(t.p, 3) })) }),
  mount(root, ctx) {
    const kit = kvlab.kit;
    const view = kvlab.widgets["next-token"].view;
    const form = root.querySelector("form");
    const plot = root.querySelector(".kv-next-plot");
    const tableBox = root.querySelector(".kv-next-table-box");
    const K = ctx.data.top.length;

    async function render(r) {
      const top = r.steps[0].top;
      kit.bind(root, { view: view({ n_tokens: r.promptLen, top }) });
      ctx.notice(r.truncated
        ? `Your text is ${r.truncated + r.promptLen} tokens, more than the model can read at once: it sees only the last ${r.promptLen}, so the first ${r.truncated} were left out of this prediction.`
        : "", "truncated");
      plot.hidden = false;
      await kit.plot(root, plot,
        [{ type: "bar", orientation: "h", x: top.map((t) => t.p), y: top.map((t, i) => `${i + 1}. ${JSON.stringify(t.text)}`), marker: { color: "#7986cb" }, hovertemplate: "%{y}: %{x:.3f}<extra></extra>" }],
        { height: 50 + 24 * top.length, margin: { l: 120, r: 10, t: 5, b: 35 }, xaxis: { range: [0, 1], title: { text: "probability" } }, yaxis: { autorange: "reversed", automargin: true } }
      );
      tableBox.classList.add("kv-visually-hidden");
    }

    // the prompt to continue, or null (no call) when there is no text
    function read() {
      const prompt = form.prompt.value;
      if (!prompt.trim()) {
        // nothing to continue: no chart of an earlier prompt stays on screen
        plot.hidden = true;
        tableBox.hidden = true;
        ctx.notice("", "truncated");
        ctx.notice("Type the beginning of a sentence: the chart shows what the model expects next.");
        ctx.say("No text, so no prediction.");
        return null;
      }
      plot.hidden = false;
      tableBox.hidden = false;
      ctx.notice("");
      return prompt;
    }
    // latest input wins (ctx.live); the model's worker runs one forward pass per prompt
    return ctx.form((prompt) => kvlab.generate({ prompt, maxNewTokens: 1, topK: K, temperature: 0 }), {
      read,
      debounce: 150,
      bind: false, // the model's numbers, put through the view first (render)
      draw: render,
      describe: (r) => `Computed in your browser by the tiny model (onnxruntime-web) from ${r.promptLen} tokens.`,
    });
  },
});
