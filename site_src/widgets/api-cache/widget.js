/* Prompt caching on the API. State → kvlab.api_cache_figure in Pyodide → render.
 * Every number and every sentence come from Python; JS reads the form, places the
 * strings and draws the curve (cost per request against requests per hour, per vendor). */
kvlab.register("api-cache", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const form = root.querySelector("form.kv-controls");
    const plot = root.querySelector(".kv-plot");
    const field = (name) => root.querySelector(`[data-field="${name}"]`);
    const COLORS = { anthropic: "#d84315", openai: "#2e7d32", google: "#1e88e5" };
    const NAMES = {
      prefix_tokens: "shared prefix", unique_tokens: "own tokens", output_tokens: "output tokens",
      requests_per_hour: "requests per hour", hours: "hours a day",
    };
    let data = ctx.data;

    const num = (name, fallback) => {
      const v = Number(form[name].value);
      return form[name].value !== "" && Number.isFinite(v) ? v : fallback;
    };
    function readForm() {
      form["hours-out"].value = form.hours.value;
      const p = data.params;
      return {
        model: form.model.value,
        ttl: form.ttl.value,
        prefix_tokens: num("prefix_tokens", p.prefix_tokens),
        unique_tokens: num("unique_tokens", p.unique_tokens),
        output_tokens: num("output_tokens", p.output_tokens),
        requests_per_hour: num("requests_per_hour", p.requests_per_hour),
        hours: num("hours", p.hours),
      };
    }

    const compute = ctx.live(
      "api_cache_figure",
      async (result) => {
        data = result;
        ctx.reportClamped(data, NAMES);
        for (const k of Object.keys(NAMES)) if (k in data.clamped) form[k].value = data.params[k];
        form["hours-out"].value = data.params.hours;
        form.ttl.disabled = !data.ttl_applies;
        await render();
      },
      (d) => d.status
    );

    function renderText() {
      const t = data.text;
      for (const k of ["verdict", "break_even", "working", "gap", "requests_per_day", "hit_rate", "month",
        "uncached_per_request", "cached_per_request", "uncached_per_day", "cached_per_day",
        "uncached_per_month", "cached_per_month"]) field(k).textContent = t[k];
      const m = data.model_info;
      field("model").textContent = `${m.vendor_name} · ${m.name}`;
      field("prices").textContent = m.prices;
      field("status").textContent = m.status_text;
      field("read").textContent = m.read;
      field("source-link").href = m.source;
      const curve = field("curve");
      const head = kit.el("tr");
      head.append(kit.el("th", null, "requests per hour"));
      for (const s of data.curve.series) head.append(kit.el("th", null, `${s.name}, cached`), kit.el("th", null, `${s.name}, not cached`));
      head.querySelectorAll("th").forEach((th) => th.setAttribute("scope", "col"));
      curve.tHead.replaceChildren(head);
      curve.tBodies[0].replaceChildren(...data.curve.rate_labels.map((r, i) => {
        const tr = kit.el("tr");
        const th = kit.el("th", null, r);
        th.setAttribute("scope", "row");
        tr.append(th);
        for (const s of data.curve.series) tr.append(kit.el("td", null, s.cached_text[i]), kit.el("td", null, s.uncached_text[i]));
        return tr;
      }));
      field("compare").tBodies[0].replaceChildren(...data.compare.map((c) => {
        const tr = kit.el("tr", c.chosen ? "kv-ac-chosen" : null);
        const th = kit.el("th", null, `${c.vendor_name} · ${c.name}`);
        th.setAttribute("scope", "row");
        tr.append(th);
        for (const v of [c.uncached_per_day, c.cached_per_day, c.saving, c.hit_rate, c.break_even, c.status]) tr.append(kit.el("td", null, v));
        return tr;
      }));
    }

    async function render() {
      renderText();
      const c = data.curve;
      const traces = [];
      for (const s of c.series) {
        const color = COLORS[s.vendor];
        traces.push(
          { type: "scatter", mode: "lines+markers", name: `${s.name}, cached`, x: c.rates, y: s.cached, text: s.cached_text,
            line: { color, width: 2.5 }, marker: { size: 5 }, hovertemplate: "%{x} per hour: %{text}<extra>" + s.name + ", cached</extra>" },
          { type: "scatter", mode: "lines", name: `${s.name}, not cached`, x: c.rates, y: s.uncached, text: s.uncached_text,
            line: { color, width: 1.5, dash: "dot" }, hovertemplate: "%{x} per hour: %{text}<extra>" + s.name + "</extra>" }
        );
      }
      await kit.plot(root, plot, traces, {
        margin: { l: 60, r: 10, t: 10, b: 50 },
        height: 360,
        xaxis: { type: "log", title: { text: "requests per hour (log scale)" }, tickvals: c.ticks.values, ticktext: c.ticks.labels },
        yaxis: { type: "log", title: { text: "USD per request (log scale)" }, dtick: 1, tickprefix: "$" },
        legend: { orientation: "h", y: -0.3 },
        shapes: [{ type: "line", xref: "x", yref: "paper", x0: data.params.requests_per_hour, x1: data.params.requests_per_hour,
          y0: 0, y1: 1, line: { color: kit.TEXT, width: 1, dash: "dash" } }],
      });
    }

    form.addEventListener("input", () => compute(readForm()));
    return { activate: () => compute(readForm()) };
  },
});
