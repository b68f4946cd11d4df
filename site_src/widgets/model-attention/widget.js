/* A real model's attention: the tiny transformer's attention weights for a
 * sentence, live from onnxruntime-web (kvlab.attention); the page was built
 * with the numpy reference (kvlab.model_attention), which gives the same
 * numbers. Tokens are buttons: hover or focus one to light up what it reads. */
kvlab.register("model-attention", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const tokensBox = root.querySelector(".kv-ma-tokens");
    const plot = root.querySelector(".kv-plot");
    const details = root.querySelector(".kv-numbers");
    const table = root.querySelector(".kv-ma-table");
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const f2 = (x) => x.toFixed(2);
    const f3 = (x) => x.toFixed(3);

    // What is shown: {tokens, weights[layer][head][q][k], mean[layer][q][k], source}
    let shown = {
      prompt: ctx.data.prompt,
      tokens: ctx.data.tokens,
      weights: ctx.data.weights,
      mean: ctx.data.mean_over_heads,
      source: "the numpy reference of the model (kvlab.model_attention), computed when this page was built",
    };
    // as kvlab.model_attention: the last pronoun of the sentence (its list: ctx.data.pronouns), else its last token
    const pronoun = (tokens) => {
      for (let i = tokens.length - 1; i >= 0; i--) if (ctx.data.pronouns.includes(tokens[i])) return i;
      return tokens.length - 1;
    };
    const view = ctx.data.view; // what the page asked to show first (model_attention's layer, head, query)
    const state = { layer: view.layer, head: view.head, query: view.query };
    let live = false;

    const matrix = () => (state.head === "mean" ? shown.mean[state.layer] : shown.weights[state.layer][state.head]);
    const where = () =>
      `Layer ${state.layer + 1}, ${state.head === "mean" ? `average of the ${shown.weights[0].length} heads` : `head ${state.head + 1}`}`;

    /* The sentence as focusable buttons. */
    function buildTokens() {
      const buttons = shown.tokens.map((t, i) => {
        const b = document.createElement("button");
        b.type = "button";
        b.className = "kv-ma-token";
        b.dataset.index = String(i);
        b.append(Object.assign(document.createElement("span"), { className: "kv-ma-text", textContent: t }), document.createElement("small"));
        b.setAttribute("aria-describedby", field("readout").id || (field("readout").id = root.id + "-readout"));
        return b;
      });
      tokensBox.replaceChildren(...buttons);
    }

    function showQuery(q) {
      state.query = q;
      const row = matrix()[q];
      tokensBox.querySelectorAll(".kv-ma-token").forEach((b, j) => {
        const small = b.querySelector("small");
        b.classList.toggle("kv-ma-query", j === q);
        b.classList.toggle("kv-ma-future", j > q);
        b.setAttribute("aria-pressed", String(j === q));
        if (j <= q) {
          b.style.setProperty("--w", f3(row[j]));
          b.dataset.weight = String(row[j]);
          b.classList.toggle("kv-ma-strong", row[j] >= 0.5);
          small.textContent = f2(row[j]);
        } else {
          b.style.removeProperty("--w");
          delete b.dataset.weight;
          b.classList.remove("kv-ma-strong");
          small.textContent = "\u00a0";
        }
      });
      const order = row.slice(0, q + 1).map((w, j) => [w, j]).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
      const parts = order.slice(0, 3).map(([w, j]) => `“${shown.tokens[j]}” ${f2(w)}`);
      field("readout").textContent = `“${shown.tokens[q]}” reads: ${parts.join(", ")}${order.length > 3 ? ", …" : ""}`;
    }

    function renderTable() {
      const m = matrix();
      field("table-where").textContent = where().replace(/^Layer/, "layer");
      const head = document.createElement("tr");
      head.append(Object.assign(document.createElement("th"), { scope: "col", textContent: "query ↓ key →" }),
        ...shown.tokens.map((t) => Object.assign(document.createElement("th"), { scope: "col", textContent: t })));
      table.tHead.replaceChildren(head);
      table.tBodies[0].replaceChildren(...m.map((r, i) => {
        const tr = document.createElement("tr");
        tr.append(Object.assign(document.createElement("th"), { scope: "row", textContent: shown.tokens[i] }));
        r.forEach((w, j) => {
          const td = document.createElement("td");
          if (j <= i) {
            td.textContent = f3(w);
            td.style.setProperty("--w", f3(w));
          } else td.className = "kv-ma-na";
          tr.append(td);
        });
        return tr;
      }));
    }

    /* Axis labels: every token while they fit; past LABELS_MAX tokens only every
     * k-th one is labelled (hover and the token boxes still name them all). */
    const LABELS_MAX = 40;
    function renderPlot() {
      const m = matrix();
      const T = shown.tokens.length;
      const narrow = plot.clientWidth < 520;
      const every = T > LABELS_MAX ? Math.ceil(T / (narrow ? LABELS_MAX / 2 : LABELS_MAX)) : 1;
      const label = (t, i) => `${t.trim() || "\u2423"} ${i + 1}`; // " cat" → "cat 2"; the token boxes show the spaces
      ctx.notice(every > 1 ? `${T} tokens: the axes label every ${every}th token; hover a cell, or use the token boxes above, for the others.` : "", "labels");
      kvlab.kit.heatmap(plot, {
        z: m.map((row, i) => row.map((w, j) => (j > i ? null : w))),
        x: shown.tokens.map(label),
        y: shown.tokens.map(label),
        every,
        xTitle: "key (what is read)",
        yTitle: "query",
        title: (i, j, w) => `“${shown.tokens[i]}” reads “${shown.tokens[j]}”: ${f3(w)}`,
        onCell: (i) => showQuery(i),
      });
    }

    async function render() {
      field("where").textContent = `${where()}; numbers from ${shown.source}.`;
      showQuery(Math.min(state.query, shown.tokens.length - 1));
      renderTable();
      if (live) {
        renderPlot();
        details.open = false;
      }
    }

    // latest input wins (ctx.live): the model's worker reads the newest sentence
    const compute = ctx.live(
      (text) => kvlab.attention(text).then((res) => ({ text, res })),
      async ({ text, res }) => {
        const changed = text !== shown.prompt;
        shown = { prompt: text, tokens: res.tokens, weights: res.weights, mean: res.mean, source: "the tiny model running in your browser (onnxruntime-web)" };
        if (changed) state.query = pronoun(shown.tokens);
        live = true;
        buildTokens();
        await render();
      },
      () => `Live: the tiny model ran this sentence in your browser (${shown.tokens.length} tokens). Hover or focus a token.`
    );

    function update(prompt) {
      if (!prompt.trim()) { // as kvlab.model_attention: nothing to read, and no chart of an earlier sentence left up
        ctx.notice("Type a sentence first: the model shows what each of its tokens reads.");
        plot.hidden = true;
        form.prompt.focus();
        return;
      }
      plot.hidden = false;
      ctx.notice("");
      return compute(prompt);
    }

    // Interactive at once with the build-time numbers; live numbers replace them.
    buildTokens();
    showQuery(state.query);
    tokensBox.addEventListener("mouseover", (ev) => {
      const b = ev.target.closest(".kv-ma-token");
      if (b) showQuery(parseInt(b.dataset.index, 10));
    });
    tokensBox.addEventListener("focusin", (ev) => {
      const b = ev.target.closest(".kv-ma-token");
      if (b) showQuery(parseInt(b.dataset.index, 10));
    });
    tokensBox.addEventListener("click", (ev) => {
      const b = ev.target.closest(".kv-ma-token");
      if (b) showQuery(parseInt(b.dataset.index, 10));
    });
    tokensBox.addEventListener("keydown", (ev) => {
      const b = ev.target.closest(".kv-ma-token");
      if (!b) return;
      const all = [...tokensBox.querySelectorAll(".kv-ma-token")];
      const i = all.indexOf(b);
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
