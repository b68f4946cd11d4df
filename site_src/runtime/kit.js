/* kvlab runtime, part 3 (page): the widget kit — small DOM, table and Plotly
 * helpers every widget shares (kvlab.kit). Rendering only: no numbers here.
 *
 *   kit.el(tag, className, text)        an element with a class and text
 *   kit.fillRows(tbody, rows)           rows of cells (strings or nodes) into a <tbody>
 *   kit.plot(root, el, traces, layout)  Plotly.react with the site's theme (colours
 *                                       and font follow the page, light or dark)
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
   * font, light grid lines; the layout's own axis settings are kept. */
  function theme(root, layout = {}) {
    const style = getComputedStyle(root);
    const axis = (a) => Object.assign({ gridcolor: GRID, zeroline: false }, a || {});
    return Object.assign({}, layout, {
      paper_bgcolor: "rgba(0,0,0,0)",
      plot_bgcolor: "rgba(0,0,0,0)",
      font: Object.assign({ color: style.color, family: style.fontFamily, size: 12 }, layout.font || {}),
      xaxis: axis(layout.xaxis),
      yaxis: axis(layout.yaxis),
    });
  }

  async function plot(root, target, traces, layout, config) {
    const Plotly = await kv.plotly();
    return Plotly.react(target, traces, theme(root, layout), Object.assign({ displayModeBar: false, responsive: true }, config || {}));
  }

  const reducedMotion = () => Boolean(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);

  kv.kit = { el, fillRows, theme, plot, reducedMotion };
})();
