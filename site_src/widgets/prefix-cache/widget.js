/* One system prompt, many requests. State → kvlab.prefix_cache_figure in Pyodide → render.
 * Every number and every formatted figure comes from Python; JS places them. */
kvlab.register("prefix-cache", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const plot = root.querySelector(".kv-plot");
    const fields = root.querySelectorAll("[data-field]");
    const NAMES = { n_requests: "requests", prefix_len: "shared prompt", suffix_len: "own tokens", block_size: "block size" };
    let data = ctx.data;

    function readForm() {
      form["prefix_len-out"].value = form.prefix_len.value;
      form["suffix_len-out"].value = form.suffix_len.value;
      const n = Number(form.n_requests.value);
      return {
        n_requests: form.n_requests.value.trim() === "" || !Number.isFinite(n) ? data.params.n_requests : n,
        prefix_len: parseInt(form.prefix_len.value, 10),
        suffix_len: parseInt(form.suffix_len.value, 10),
        block_size: parseInt(form.block_size.value, 10),
      };
    }

    // latest input wins (ctx.live): Python clamps out-of-range input, so show what was really computed
    const compute = ctx.live(
      "prefix_cache_figure",
      async (result) => {
        data = result;
        // Python clamps out-of-range input: show what was really computed.
        form["prefix_len-out"].value = data.params.prefix_len;
        form["suffix_len-out"].value = data.params.suffix_len;
        ctx.reportClamped(data, NAMES);
        await render();
      },
      (data) => `Computed in your browser by kvlab.prefix_cache_figure (${data.text.n_requests} requests).`
    );
    const update = () => compute(readForm());

    function renderText() {
      const t = data.text;
      fields.forEach((el) => {
        const key = el.dataset.field;
        if (key === "granularity") return;
        const name = key.replace(/2$/, "");
        if (name in t) el.textContent = t[name];
      });
      const rows = data.granularity.map((g) => {
        const tr = document.createElement("tr");
        if (g.block_size === data.params.block_size) tr.className = "kv-current";
        const th = Object.assign(document.createElement("th"), { scope: "row", textContent: String(g.block_size) });
        tr.append(th, ...[g.tokens_reused_per_request, g.tokens_recomputed_of_prefix, g.tokens_reused].map((x) =>
          Object.assign(document.createElement("td"), { textContent: x.toLocaleString("en-US") })));
        return tr;
      });
      root.querySelector('[data-field="granularity"]').replaceChildren(...rows);
    }

    async function render() {
      renderText();
      const x = data.requests;
      const line = (name, y, color, dash) => ({
        type: "scatter", mode: "lines", name, x, y, line: { color, width: 2.5, dash },
        hovertemplate: "after request %{x}: %{y:,} tokens computed<extra>" + name + "</extra>",
      });
      await kvlab.kit.plot(
        root,
        plot,
        [
          line("no prefix cache", data.no_cache.cumulative_computed, "#ef5350"),
          line("token-granular (radix tree)", data.token_granular.cumulative_computed, "#5c6bc0"),
          line(`${data.params.block_size}-token blocks (vLLM)`, data.blocks.cumulative_computed, "#ffb300", "dash"),
        ],
        {
          margin: { l: 70, r: 10, t: 10, b: 50 },
          height: 340,
          legend: { orientation: "h", y: 1.12, x: 0 },
          xaxis: { title: { text: "requests served" } },
          yaxis: { title: { text: "prefill tokens computed, total" }, tickformat: ",", rangemode: "tozero" },
        }
      );
    }

    form.addEventListener("input", update);
    return { activate: () => update() };
  },
});
