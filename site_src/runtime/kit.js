/* kvlab runtime, part 3 (page): the widget kit — small DOM, table and Plotly
 * helpers every widget shares (kvlab.kit). Rendering only: no numbers here.
 *
 *   kit.el(tag, className, text)        an element with a class and text
 *   kit.fillRows(tbody, rows)           rows of cells (strings or nodes) into a <tbody>
 *   kit.linked(text)                    text as nodes, each web address a link named by
 *                                       its site (the build's `links` filter does the same)
 *   kit.plot(root, el, traces, layout)  Plotly.react with the site's theme (colours
 *                                       and font follow the page, light or dark);
 *                                       calls that come while a figure is drawing
 *                                       are coalesced: the latest is drawn next, at
 *                                       most every DRAW_GAP_MS (a slider drag or a
 *                                       generation's tokens never queue up redraws)
 *   kit.theme(root, layout)             that theme merged into a layout
 *   kit.heatScale()                     the colour scale of every attention heatmap, for
 *                                       the page's scheme: the strongest weight is the
 *                                       most ink (deep indigo on light, near-white on dark)
 *   kit.reducedMotion()                 the reader asked for less motion
 */
(function () {
  "use strict";

  const kv = window.kvlab;
  const GRID = "rgba(128,128,128,0.25)";

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  // sitebuild/widget_blocks.py URL_RE: ends before a closing bracket or a trailing full stop
  const URL_RE = /https?:\/\/[^\s()<>"]+[^\s()<>".,;:]/g;

  function linked(text) {
    const nodes = [];
    let last = 0;
    for (const m of String(text).matchAll(URL_RE)) {
      nodes.push(document.createTextNode(text.slice(last, m.index)));
      const a = el("a", null, m[0].split("://")[1].split("/")[0].replace(/^www\./, ""));
      a.href = m[0];
      a.rel = "noopener";
      nodes.push(a);
      last = m.index + m[0].length;
    }
    nodes.push(document.createTextNode(String(text).slice(last)));
    return nodes;
  }

  function fillRows(tbody, rows) {
    tbody.replaceChildren(
      ...rows.map((cells) => {
        const tr = document.createElement("tr");
        cells.forEach((c) => {
          const td = document.createElement("td");
          if (c instanceof Node) td.appendChild(c);
          else td.textContent = String(c);
          tr.appendChild(td);
        });
        return tr;
      })
    );
  }

  /* The site's Plotly look: transparent background, the page's text colour and
   * font, light grid lines; the layout's own axis settings are kept. The page's
   * colour and font are read once per colour scheme (getComputedStyle forces a
   * style recalculation: once per token of a generation added up to tens of ms). */
  const looks = new WeakMap();
  function look(root) {
    const scheme = document.body ? document.body.getAttribute("data-md-color-scheme") || "" : "";
    let seen = looks.get(root);
    if (!seen || seen.scheme !== scheme) {
      const style = getComputedStyle(root);
      seen = { scheme, color: style.color, family: style.fontFamily };
      looks.set(root, seen);
    }
    return seen;
  }

  function theme(root, layout = {}) {
    const { color, family } = look(root);
    const axis = (a) => Object.assign({ gridcolor: GRID, zeroline: false }, a || {});
    return Object.assign({}, layout, {
      paper_bgcolor: "rgba(0,0,0,0)",
      plot_bgcolor: "rgba(0,0,0,0)",
      font: Object.assign({ color, family, size: 12 }, layout.font || {}),
      xaxis: axis(layout.xaxis),
      yaxis: axis(layout.yaxis),
    });
  }

  /* One scale for the attention heatmaps (attention, model-attention), going the same
   * way as the static tables' cells: more weight, more contrast with the background. On
   * dark, 0 is a dim indigo that still stands apart from the widget's background (the
   * masked cells, which have no weight, show the background itself). */
  const HEAT = {
    light: [[0, "#f4f5fb"], [0.25, "#b5bbe3"], [0.5, "#7986cb"], [1, "#1a237e"]],
    dark: [[0, "#323b70"], [0.25, "#4556b8"], [0.5, "#8190d6"], [1, "#eef0fb"]],
  };
  const heatScale = () => (document.body && document.body.getAttribute("data-md-color-scheme") === "slate" ? HEAT.dark : HEAT.light);

  const DRAW_GAP_MS = 120;
  const drawing = new WeakMap(); // figure element -> { next, done }

  function plot(root, target, traces, layout, config) {
    const args = { root, traces, layout, config };
    const busy = drawing.get(target);
    if (busy) {
      busy.next = args; // drawn when the current one is done; earlier waiting ones are skipped
      return busy.done;
    }
    const state = { next: args };
    drawing.set(target, state);
    state.done = (async () => {
      try {
        const Plotly = await kv.plotly();
        let out;
        while (state.next) {
          const a = state.next;
          state.next = null;
          const t0 = performance.now();
          out = await Plotly.react(target, a.traces, theme(a.root, a.layout), Object.assign({ displayModeBar: false, responsive: true }, a.config || {}));
          const wait = DRAW_GAP_MS - (performance.now() - t0);
          if (state.next && wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
        return out;
      } finally {
        drawing.delete(target);
      }
    })();
    return state.done;
  }

  const reducedMotion = () => Boolean(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);

  kv.kit = { el, fillRows, linked, theme, heatScale, plot, reducedMotion };
})();
