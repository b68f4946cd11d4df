/* kvlab runtime, part 3 (page): the widget kit — small DOM, table and Plotly
 * helpers every widget shares (kvlab.kit). Rendering only: no numbers here.
 *
 *   kit.el(tag, className, text)        an element with a class and text
 *   kit.fillRows(tbody, rows)           rows of cells (strings or nodes) into a <tbody>
 *   kit.plot(root, el, traces, layout)  Plotly.react with the site's theme (colours
 *                                       and font follow the page, light or dark);
 *                                       calls that come while a figure is drawing
 *                                       are coalesced: the latest is drawn next, at
 *                                       most every DRAW_GAP_MS (a slider drag or a
 *                                       generation's tokens never queue up redraws)
 *   kit.theme(root, layout)             that theme merged into a layout
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

  kv.kit = { el, fillRows, theme, plot, reducedMotion };
})();
