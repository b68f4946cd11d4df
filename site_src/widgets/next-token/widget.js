/* One forward pass of the tiny model (onnxruntime-web): the top next tokens.
 * Static figure: kvlab.next_token_demo, the numpy reference of the same weights. */
kvlab.register("next-token", {
  mount(root, ctx) {
    const form = root.querySelector("form");
    const plot = root.querySelector(".kv-next-plot");
    const table = root.querySelector(".kv-next-table");
    const field = (n) => root.querySelector(`[data-field="${n}"]`);
    const K = ctx.data.top.length;
    let timer = null;

    async function render(top, n) {
      field("n").textContent = n;
      field("top").replaceChildren(
        ...top.map((t) => {
          const tr = document.createElement("tr");
          const td = document.createElement("td");
          const code = document.createElement("code");
          code.textContent = t.text;
          td.appendChild(code);
          const p = document.createElement("td");
          p.textContent = t.p.toFixed(3);
          tr.append(td, p);
          return tr;
        })
      );
      const Plotly = await kvlab.plotly();
      const style = getComputedStyle(root);
      Plotly.react(
        plot,
        [{ type: "bar", orientation: "h", x: top.map((t) => t.p), y: top.map((t, i) => `${i + 1}. ${JSON.stringify(t.text)}`), marker: { color: "#7986cb" }, hovertemplate: "%{y}: %{x:.3f}<extra></extra>" }],
        {
          height: 50 + 24 * top.length,
          margin: { l: 120, r: 10, t: 5, b: 35 },
          paper_bgcolor: "rgba(0,0,0,0)",
          plot_bgcolor: "rgba(0,0,0,0)",
          font: { color: style.color, family: style.fontFamily, size: 12 },
          xaxis: { range: [0, 1], title: { text: "probability" }, gridcolor: "rgba(128,128,128,0.2)" },
          yaxis: { autorange: "reversed", automargin: true },
        },
        { displayModeBar: false, responsive: true }
      );
      table.classList.add("kv-visually-hidden");
    }

    // latest input wins (ctx.live); the model's worker runs one forward pass per prompt
    const compute = ctx.live(
      (prompt) => kvlab.generate({ prompt, maxNewTokens: 1, topK: K, temperature: 0 }),
      (r) => render(r.steps[0].top, r.promptLen),
      (r) => `Computed in your browser by the tiny model (onnxruntime-web)${r.truncated ? `; only the last ${r.promptLen} tokens of your text fit, the first ${r.truncated} were left out` : ""}.`
    );
    function update() {
      const prompt = form.prompt.value;
      if (!prompt.trim()) {
        ctx.notice("Type the beginning of a sentence.");
        return;
      }
      ctx.notice("");
      return compute(prompt);
    }
    form.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(update, 150);
    });
    return { activate: update };
  },
});
