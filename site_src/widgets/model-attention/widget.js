/* A real model's attention: the tiny transformer's attention weights for a
 * sentence, live from onnxruntime-web (kvlab.attention); the page was built
 * with the numpy reference (kvlab.model_attention_figure), which gives the same
 * numbers. Tokens are buttons: hover or focus one to light up what it reads.
 * `display` is the JS twin of kvlab.widgets.attention.model_attention_display (the
 * template's): model_attention_figure's result, or the model's numbers in its shape → the bound strings. */
kvlab.register("model-attention", {
  SOURCES: {
    built: "the numpy reference of the model (kvlab.model_attention_figure), computed when this page was built",
    live: "the tiny model running in your browser (onnxruntime-web)",
  },
  display(data, layer, head, query, source = "built") {
    const f = kvlab.kit.fixed;
    // a token that is only whitespace would be an empty box (and a button with no name): ↵ / ␣
    const tokens = data.tokens.map((t) => (t.trim() || t.includes("\n") ? t.replaceAll("\n", "↵") : "␣"));
    const m = head === "mean" ? data.mean_over_heads[layer] : data.weights[layer][head];
    const row = m[query];
    const which = head === "mean" ? `average of the ${data.n_head} heads` : `head ${head + 1}`;
    const order = row.slice(0, query + 1).map((w, j) => j).sort((a, b) => row[b] - row[a] || a - b);
    const parts = order.slice(0, 3).map((j) => `“${tokens[j]}” ${f(row[j], 2)}`).join(", ");
    return {
      readout: `“${tokens[query]}” reads: ${parts}${order.length > 3 ? ", …" : ""}`,
      where: `Layer ${layer + 1}, ${which}; numbers from ${kvlab.widgets["model-attention"].SOURCES[source]}.`,
      table_where: `layer ${layer + 1}, ${which}`,
      tokens: tokens.map((text, j) => ({
        text,
        weight: j <= query ? row[j] : null,
        w: j <= query ? f(row[j], 3) : null,
        small: j <= query ? f(row[j], 2) : "\u00a0",
        state: j === query ? "query" : j > query ? "future" : null,
        ink: j <= query && row[j] >= 0.5 ? "strong" : null,
        pressed: j === query,
      })),
      rows: m.map((r, i) => ({ token: tokens[i], cells: r.map((w, j) => ({ w: j <= i ? f(w, 3) : null })) })),
    };
  },
  mount(root, ctx) {
    const kit = kvlab.kit;
    const display = kvlab.widgets["model-attention"].display;
    const form = root.querySelector(".kv-controls");
    const tokensBox = root.querySelector(".kv-ma-tokens");
    const plot = root.querySelector(".kv-plot");
    const details = root.querySelector(".kv-numbers");
    const readout = root.querySelector(".kv-ma-readout");

    // What is shown: model_attention_figure's result (or the model's numbers in its shape), and where it came from
    let shown = { data: ctx.data, source: "built" };
    // as kvlab.model_attention_figure: the last pronoun of the sentence (its list: ctx.data.pronouns), else its last token
    const pronoun = (tokens) => {
      for (let i = tokens.length - 1; i >= 0; i--) if (ctx.data.pronouns.includes(tokens[i])) return i;
      return tokens.length - 1;
    };
    const state = { ...ctx.data.view }; // what the page asked to show first (model_attention_figure's layer, head, query)
    let live = false;
    const now = () => display(shown.data, state.layer, state.head, state.query, shown.source);
    const buttons = () => [...tokensBox.querySelectorAll(".kv-ma-token")];

    /* The query token: the token buttons and the readout are bound again in place (focus stays). */
    function showQuery(q) {
      state.query = q;
      const d = now();
      buttons().forEach((b, j) => kit.bind(b, d.tokens[j]));
      kit.bind(readout, { display: d });
    }

    /* Axis labels: every token while they fit; past LABELS_MAX tokens only every
     * k-th one is labelled (hover and the token boxes still name them all). */
    const LABELS_MAX = 40;
    function renderPlot() {
      const { tokens, weights, mean_over_heads: mean } = shown.data;
      const m = state.head === "mean" ? mean[state.layer] : weights[state.layer][state.head];
      const T = tokens.length;
      const every = T > LABELS_MAX ? Math.ceil(T / (plot.clientWidth < 520 ? LABELS_MAX / 2 : LABELS_MAX)) : 1;
      const label = (t, i) => `${t.trim() || "\u2423"} ${i + 1}`; // " cat" → "cat 2"; the token boxes show the spaces
      ctx.notice(every > 1 ? `${T} tokens: the axes label every ${every}th token; hover a cell, or use the token boxes above, for the others.` : "", "labels");
      kit.heatmap(plot, {
        z: m.map((row, i) => row.map((w, j) => (j > i ? null : w))),
        x: tokens.map(label),
        y: tokens.map(label),
        every,
        xTitle: "key (what is read)",
        yTitle: "query",
        title: (i, j, w) => `“${tokens[i]}” reads “${tokens[j]}”: ${kit.fixed(w, 3)}`,
        onCell: (i) => showQuery(i),
      });
    }

    function render() {
      state.query = Math.min(state.query, shown.data.tokens.length - 1);
      kit.bind(root, { display: now() });
      if (live) {
        renderPlot();
        details.open = false;
      }
    }

    // latest input wins (ctx.live): the model's worker reads the newest sentence
    const compute = ctx.live(
      (text) => kvlab.attention(text).then((res) => ({ text, res })),
      async ({ text, res }) => {
        if (text !== shown.data.prompt) state.query = pronoun(res.tokens);
        const data = { prompt: text, tokens: res.tokens, weights: res.weights, mean_over_heads: res.mean, n_head: res.weights[0].length };
        shown = { data, source: "live" };
        live = true;
        render();
      },
      () => `Live: the tiny model ran this sentence in your browser (${shown.data.tokens.length} tokens). Hover or focus a token.`
    );

    function update(prompt) {
      if (!prompt.trim()) { // as kvlab.model_attention_figure: nothing to read, and no chart of an earlier sentence left up
        ctx.notice("Type a sentence first: the model shows what each of its tokens reads.");
        plot.hidden = true;
        form.prompt.focus();
        return;
      }
      plot.hidden = false;
      ctx.notice("");
      return compute(prompt);
    }

    // Interactive at once with the build-time numbers (the template's buttons); live numbers replace them.
    render();
    const pick = (ev) => {
      const b = ev.target.closest(".kv-ma-token");
      if (b) showQuery(buttons().indexOf(b));
    };
    for (const type of ["mouseover", "focusin", "click"]) tokensBox.addEventListener(type, pick);
    tokensBox.addEventListener("keydown", (ev) => {
      const all = buttons();
      const i = all.indexOf(ev.target.closest(".kv-ma-token"));
      if (i < 0) return;
      const next = { ArrowRight: i + 1, ArrowDown: i + 1, ArrowLeft: i - 1, ArrowUp: i - 1, Home: 0, End: all.length - 1 }[ev.key];
      if (next === undefined) return;
      ev.preventDefault();
      all[Math.max(0, Math.min(all.length - 1, next))].focus();
    });
    form.addEventListener("input", (ev) => {
      if (ev.target === form.prompt) return; // the sentence is applied with Show (or Enter)
      state.layer = parseInt(form.layer.value, 10);
      state.head = form.head.value === "mean" ? "mean" : parseInt(form.head.value, 10);
      if (ev.target === form) update(form.prompt.value); // settings from an embed URL
      else render();
    });
    // The sentence box holds at most maxlength characters: a longer paste is cut
    // by the browser, so say what was kept rather than cut it silently.
    form.prompt.addEventListener("paste", (ev) => {
      const text = (ev.clipboardData && ev.clipboardData.getData("text")) || "";
      const room = form.prompt.maxLength - form.prompt.value.length + (form.prompt.selectionEnd - form.prompt.selectionStart);
      ctx.notice(text.length > room ? `Your paste was ${text.length} characters; this box holds ${form.prompt.maxLength}, so only the first ${Math.max(room, 0)} were kept.` : "", "truncated");
    });
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      update(form.prompt.value);
    });

    return { activate: () => update(form.prompt.value) };
  },
});
