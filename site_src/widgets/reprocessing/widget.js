/* Times each token was processed: state {n} → kvlab.reprocessing in Pyodide → render.
 * JS only renders and handles input: every number comes from Python. */
kvlab.register("reprocessing", {
  mount(root, ctx) {
    const form = root.querySelector(".kv-controls");
    const plot = root.querySelector(".kv-plot");
    const tbody = root.querySelector(".kv-reprocessing-table tbody");
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const addButton = root.querySelector('[data-action="add"]');

    let data = ctx.data;
    const state = { n: data.params.n };

    const compute = ctx.live(
      "reprocessing",
      async (result) => {
        data = result;
        await render();
      },
      (data) => `Computed in your browser by kvlab.reprocessing (n = ${data.params.n}).`
    );
    function update() {
      return compute({ n: state.n });
    }

    function renderText() {
      const n = data.params.n;
      const k = Math.min(10, n); // the token the sentence names next to token 1
      form.n.value = n;
      form["n-out"].value = n;
      field("n").textContent = n;
      field("n2").textContent = n;
      field("first").textContent = data.no_cache[0];
      field("k").textContent = k;
      field("kth").textContent = data.no_cache[k - 1];
      field("cache-once").textContent = data.cache[0];
      const c = data.counters;
      field("c-token").textContent = c.token;
      field("c-reprocessed").textContent = c.reprocessed.no_cache.toLocaleString("en-US");
      field("c-total-nc").textContent = c.total.no_cache.toLocaleString("en-US");
      field("c-total-c").textContent = c.total.cache.toLocaleString("en-US");
      addButton.disabled = n >= Number(form.n.max);
      // the counters that changed flash once (not under reduced motion)
      if (!kvlab.kit.reducedMotion()) {
        root.querySelectorAll(".kv-counters dd").forEach((dd) => {
          dd.classList.remove("kv-tick");
          void dd.offsetWidth; // restart the animation
          dd.classList.add("kv-tick");
        });
      }
      tbody.replaceChildren(
        ...data.tokens.map((t, i) => {
          const tr = document.createElement("tr");
          tr.append(
            Object.assign(document.createElement("th"), { scope: "row", textContent: t }),
            Object.assign(document.createElement("td"), { textContent: data.no_cache[i] }),
            Object.assign(document.createElement("td"), { textContent: data.cache[i] })
          );
          return tr;
        })
      );
    }

    async function render() {
      renderText();
      await kvlab.kit.plot(
        root,
        plot,
        [
          { type: "bar", name: "without a cache", x: data.tokens, y: data.no_cache, marker: { color: "#ef6c00" },
            hovertemplate: "token %{x}: processed %{y} times<extra>without a cache</extra>" },
          { type: "bar", name: "with a cache", x: data.tokens, y: data.cache, marker: { color: "#5c6bc0" },
            hovertemplate: "token %{x}: processed %{y} time<extra>with a cache</extra>" },
        ],
        {
          barmode: "overlay",
          bargap: 0.15,
          margin: { l: 60, r: 10, t: plot.clientWidth < 520 ? 80 : 40, b: 50 },
          height: 300,
          legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom" },
          xaxis: { title: { text: "token position" } },
          yaxis: { title: { text: "times processed" }, rangemode: "tozero" },
        }
      );
    }

    // "Add token": one more token in the reply; Python returns the counters for it
    addButton.addEventListener("click", () => {
      state.n = Math.min(Number(form.n.max), data.params.n + 1);
      form.n.value = state.n;
      form["n-out"].value = state.n;
      update();
    });
    root.querySelector('[data-action="restart"]').addEventListener("click", () => {
      state.n = Number(form.n.min);
      update();
    });

    form.addEventListener("input", () => {
      state.n = parseInt(form.n.value, 10);
      form["n-out"].value = state.n;
      update();
    });

    return { activate: () => update() };
  },
});
