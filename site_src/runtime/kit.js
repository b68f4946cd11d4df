/* kvlab runtime, part 3 (page): the widget kit — small DOM, table and Plotly
 * helpers every widget shares (kvlab.kit). Rendering only: no numbers here.
 *
 *   kit.el(tag, className, text)        an element with a class and text
 *   kit.fillRows(tbody, rows)           rows of cells (strings or nodes) into a <tbody>
 *   kit.linked(text)                    text as nodes, each web address a link named by
 *                                       its site (the build's `links` filter does the same)
 *   kit.plot(root, el, traces, layout)  Plotly.react with the site's theme (colours
 *                                       and font follow the page, light or dark, and
 *                                       the chart is drawn again on a scheme switch);
 *                                       calls that come while a figure is drawing
 *                                       are coalesced: the latest is drawn next, at
 *                                       most every DRAW_GAP_MS (a slider drag or a
 *                                       generation's tokens never queue up redraws)
 *   kit.theme(root, layout)             that theme merged into a layout
 *   kit.TEXT                            a trace's or shape's line/marker colour meaning
 *                                       "the page's text colour" (kit.plot fills it in)
 *   kit.heatmap(el, opts)               an attention heatmap (rows: queries, columns: keys,
 *                                       weights 0..1, null = no cell) drawn as a CSS grid:
 *                                       no chart library, colours from the stylesheet (they
 *                                       follow the scheme, like the static tables' cells)
 *   kit.raster(svg, raster, opts)       a raster of small categories redrawn in an <svg>, the
 *                                       templates' markup: raster is a view's raster_runs
 *                                       (kvlab.widgets.views: runs and their tooltips, from
 *                                       Python), a rect per run, class opts.prefix + value;
 *                                       opts.rows [{row, className}] outlines a row,
 *                                       opts.lines [{y, className}] rules across at y
 *                                       (cell units)
 *   kit.reducedMotion()                 the reader asked for less motion
 *   kit.fixed(x, digits, grouping)      x with that many decimals, as Python's f"{x:.{digits}f}"
 *                                       (grouping: f"{x:,.{digits}f}") writes it: the one number
 *                                       formatter of the model widgets' views (their Python
 *                                       twins beside their functions in kvlab.widgets use those f-strings)
 *
 * The binder: the widget's template is its only markup. The build fills it with
 * Jinja; in the browser kit.bind fills the same elements from a call's result.
 *   kit.bind(scope, data)               fills, in scope (not inside another list's item):
 *     data-bind="path"                  textContent (null → "")
 *     data-bind-links="path"            text whose web addresses become links (kit.linked)
 *     data-bind-attr="name:path …"      attributes (null → removed; a boolean: "true"/"false" in data-*
 *                                       and aria-*, else present and empty or removed)
 *     data-bind-hidden="path …"         hidden when every value is falsy ("!path": when truthy);
 *                                       Python's truth: "", 0, null, [] and {} are false
 *     data-bind-class="prefix:path"     one class prefix + value (the last one replaced)
 *     data-bind-style="prop:path unit"  a style property, e.g. "width:percent %"
 *     <template data-each="path">       its one element (marked data-item) cloned per item of
 *                                       the list, bound with the item as data (paths relative
 *                                       to it; "." is the item itself); the items that follow
 *                                       the template (the build's, or the last call's) replaced; in a
 *                                       mounted widget a clone's data-live-only parts are shown and its
 *                                       data-static-only parts hidden, as mounting does; with
 *                                       data-each-keep, the items it cloned before are bound again in
 *                                       place (those whose value changed) and only the new ones cloned
 *                                       (a list that grows by one item a frame, as a generation's steps do)
 *     data-bind-scope="path"            the element and what it holds bound with that value (paths
 *                                       inside relative to it): kit.bind(el, other) redraws just it
 *   path: names and list indexes with dots ("result.kinds.0.label"); in -attr and -hidden,
 *         "path=text" is true when the value, as text, is that text ("open:status=differs")
 *   kit.get(data, path)                 the value at a path
 *   kit.readForm(form, params)          the form's controls named like params' keys, typed as
 *                                       params' values (a number left blank or not a number:
 *                                       params' value); checkboxes give booleans
 *   kit.writeForm(form, values)         puts values in the controls (and <output>s) so named; never
 *                                       into a field the reader is typing in: held back until it settles
 *                                       (Enter or blur), and shown then if the text is still the one
 *                                       the value answered; a value equal as a number is not written
 *   kit.watchForm(form)                 starts following what the reader types in it (mounting does, for
 *                                       every widget's form; writeForm does too)
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

  /* A colour a widget gives a trace or a shape to mean "the page's text colour": replaced at
   * each draw, so it follows a scheme switch (a colour read once would not). */
  const TEXT = "kvlab:text";
  const inText = (line, color) => (line && line.color === TEXT ? Object.assign({}, line, { color }) : line);
  function painted(root, traces, layout) {
    const { color } = look(root);
    const fix = (item) => Object.assign({}, item, item.line ? { line: inText(item.line, color) } : {}, item.marker ? { marker: inText(item.marker, color) } : {});
    return [traces.map(fix), layout.shapes ? Object.assign({}, layout, { shapes: layout.shapes.map(fix) }) : layout];
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

  /* An attention heatmap without Plotly (whose heatmap-capable bundle costs a long
   * main-thread task to start: bench/results/2026-12-02-runtime.md): one grid cell per
   * weight, coloured by the stylesheet from --w (kvlab.css, .kv-hm-cell), labels as
   * text. opts: z (rows of weights or null), x, y (labels), xTitle, yTitle,
   * every (label every k-th row and column), title(i, j, w) (a cell's tooltip),
   * onCell(i, j) (a click on a cell). */
  function heatmap(target, opts) {
    const { z, x, y, every = 1 } = opts;
    const cols = x.length;
    const grid = el("div", "kv-hm-grid");
    grid.style.setProperty("--kv-hm-cols", String(cols));
    const cells = [];
    z.forEach((row, i) => {
      cells.push(el("span", "kv-hm-y", i % every === 0 ? y[i] : ""));
      row.forEach((w, j) => {
        const c = el("span", w === null ? "kv-hm-cell kv-hm-none" : "kv-hm-cell");
        if (w !== null) {
          c.style.setProperty("--w", w.toFixed(3));
          if (opts.title) c.title = opts.title(i, j, w);
        }
        c.dataset.i = String(i);
        c.dataset.j = String(j);
        cells.push(c);
      });
    });
    cells.push(el("span"));
    x.forEach((label, j) => cells.push(el("span", "kv-hm-x", j % every === 0 ? label : "")));
    grid.append(...cells);
    if (opts.onCell) {
      grid.addEventListener("click", (ev) => {
        const c = ev.target.closest(".kv-hm-cell");
        if (c && !c.classList.contains("kv-hm-none")) opts.onCell(parseInt(c.dataset.i, 10), parseInt(c.dataset.j, 10));
      });
    }
    const body = el("div", "kv-hm-body");
    body.append(el("span", "kv-hm-ytitle", opts.yTitle || ""), grid);
    const scale = el("div", "kv-hm-scale");
    scale.append(el("span", null, "0"), el("i"), el("span", null, "1"), el("span", "kv-hm-scale-name", opts.scaleName || "weight"));
    target.replaceChildren(body, el("div", "kv-hm-xtitle", opts.xTitle || ""), scale);
    target.classList.add("kv-hm");
  }

  const DRAW_GAP_MS = 120;
  const drawing = new WeakMap(); // figure element -> { next, done }
  const drawn = new Map(); // figure element -> what it last drew, to draw again on a scheme switch
  const forgetLeftPages = () => drawn.forEach((_, t) => t.isConnected || drawn.delete(t));

  function plot(root, target, traces, layout, config) {
    const args = { root, traces, layout, config };
    forgetLeftPages();
    drawn.set(target, args);
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
          const [traces, layout] = painted(a.root, a.traces, a.layout || {});
          out = await Plotly.react(target, traces, theme(a.root, layout), Object.assign({ displayModeBar: false, responsive: true }, a.config || {}));
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

  /* A chart's text takes the page's colour when drawn: when the reader switches the colour
   * scheme, every chart on the page is drawn again in the new one (dark text on a dark
   * page otherwise, until the next change). */
  let scheme = document.body.getAttribute("data-md-color-scheme");
  new MutationObserver(() => {
    const now = document.body.getAttribute("data-md-color-scheme");
    if (now === scheme) return; // material sets the attributes again with the same values
    scheme = now;
    forgetLeftPages();
    drawn.forEach((a, target) => plot(a.root, target, a.traces, a.layout, a.config));
  }).observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });

  /* A raster of small categories (rows: steps, columns: positions) drawn in place into an <svg>, in
   * the markup the templates write at build time (the static and the live figure are one drawing):
   * `raster` is a widget view's kvlab.widgets.views.raster_runs, its runs [x, y, length, value]
   * (one per stretch of one non-zero value in a row) and their tooltips, written by Python (none
   * past views.RASTER_TITLES_MAX cells). One rect per run, x and y in cell units, 0.1 short of the
   * run (a hairline gap), class prefix + value; the colours are in the stylesheet, so they follow
   * the scheme. The marks go on top, in one group: rows outlined (a selected step), lines across at
   * y in cell units. One string per call (a few ms for 4,000 cells); with the same raster and prefix
   * as last time only the marks are redrawn (a step slider). */
  const rasters = new WeakMap(); // svg -> { raster, prefix } last drawn
  const escapeText = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const unit = (x) => String(Math.round(x * 1000) / 1000);

  function rasterMarks(opts, cols) {
    let out = "";
    for (const m of opts.rows || []) out += `<rect x="-0.05" y="${unit(m.row - 0.05)}" width="${cols}" height="1" class="${m.className}"/>`;
    for (const l of opts.lines || []) out += `<line x1="-0.05" x2="${unit(cols - 0.05)}" y1="${unit(l.y)}" y2="${unit(l.y)}" class="${l.className}"/>`;
    return out;
  }

  function raster(svg, drawing, opts = {}) {
    const prefix = opts.prefix || "";
    const marks = rasterMarks(opts, drawing.width);
    const last = rasters.get(svg);
    const group = svg.querySelector(":scope > g.kv-raster-marks");
    if (group && last && last.drawing === drawing && last.prefix === prefix) {
      group.innerHTML = marks;
      return;
    }
    const titles = drawing.titles || [];
    const parts = drawing.runs.map(([x, y, n, v], i) => {
      const rect = `<rect x="${x}" y="${y}" width="${unit(n - 0.1)}" height="0.9" class="${prefix}${v}"`;
      return i < titles.length ? `${rect}><title>${escapeText(titles[i])}</title></rect>` : `${rect}/>`;
    });
    parts.push(`<g class="kv-raster-marks">${marks}</g>`);
    svg.setAttribute("viewBox", `0 0 ${drawing.width} ${drawing.height}`);
    svg.innerHTML = parts.join("");
    rasters.set(svg, { drawing, prefix });
  }

  /* ---- the binder ---- */
  function get(data, path) {
    if (path === "." || path === "") return data;
    let v = data;
    for (const key of path.split(".")) {
      if (v === null || v === undefined) return undefined;
      v = v[key];
    }
    return v;
  }

  // "path" or "path=text" (true when the value, as text, is that text)
  function value(data, spec) {
    const eq = spec.indexOf("=");
    return eq < 0 ? get(data, spec) : text(get(data, spec.slice(0, eq))) === spec.slice(eq + 1);
  }

  // Python's truth, as the templates' {% if %} reads it
  const truthy = (v) => (Array.isArray(v) ? v.length > 0 : v && typeof v === "object" ? Object.keys(v).length > 0 : Boolean(v));
  const text = (v) => (v === null || v === undefined ? "" : String(v));
  const pairs = (spec) => spec.trim().split(/\s+(?=[\w-]+:)/).map((p) => [p.slice(0, p.indexOf(":")), p.slice(p.indexOf(":") + 1)]);
  const BOUND = "[data-bind],[data-bind-links],[data-bind-attr],[data-bind-hidden],[data-bind-class],[data-bind-style]";

  // an element belongs to scope's data unless it is inside (or is) a list's item or a
  // data-bind-scope within scope
  function owns(scope, node) {
    const item = node.closest("[data-item],[data-bind-scope]");
    return !item || item === scope || !scope.contains(item);
  }

  // what is already there is left alone: no needless DOM change (a list bound again in place)
  function setText(node, t) {
    const f = node.firstChild;
    if (f ? f === node.lastChild && f.nodeType === 3 && f.data === t : t === "") return;
    node.textContent = t;
  }
  function setAttr(node, name, v) {
    if (v === null) node.removeAttribute(name);
    else if (node.getAttribute(name) !== v) node.setAttribute(name, v);
  }

  function bindOne(node, data) {
    const d = node.dataset;
    if (d.bind !== undefined) setText(node, text(get(data, d.bind)));
    if (d.bindLinks !== undefined) node.replaceChildren(...linked(text(get(data, d.bindLinks))));
    if (d.bindAttr !== undefined) {
      for (const [name, path] of pairs(d.bindAttr)) {
        const v = value(data, path);
        if (typeof v === "boolean" && /^(data|aria)-/.test(name)) setAttr(node, name, String(v));
        else if (v === null || v === undefined || v === false) setAttr(node, name, null);
        else setAttr(node, name, v === true ? "" : String(v));
      }
    }
    if (d.bindHidden !== undefined) {
      const not = d.bindHidden.startsWith("!");
      const v = (not ? d.bindHidden.slice(1) : d.bindHidden).split(" ").some((spec) => truthy(value(data, spec)));
      node.hidden = not ? v : !v;
    }
    if (d.bindClass !== undefined) {
      for (const [prefix, path] of pairs(d.bindClass)) {
        const v = get(data, path);
        const want = v !== null && v !== undefined && v !== "" ? prefix + v : null;
        const have = [...node.classList].filter((c) => c.startsWith(prefix));
        if (have.length === (want ? 1 : 0) && (!want || have[0] === want)) continue;
        have.forEach((c) => node.classList.remove(c));
        if (want) node.classList.add(want);
      }
    }
    if (d.bindStyle !== undefined) {
      for (const [prop, rest] of pairs(d.bindStyle)) {
        const [path, unitText = ""] = rest.split(" ");
        const v = text(get(data, path)) + unitText;
        if (node.style.getPropertyValue(prop) !== v) node.style.setProperty(prop, v);
      }
    }
  }

  // a row cloned into a mounted widget shows its live-only parts and hides its static-only
  // ones, as mounting did for the build's rows (context.js mountOne)
  function asMounted(node) {
    for (const n of [node, ...node.querySelectorAll("[data-live-only],[data-static-only]")]) {
      if (n.hasAttribute("data-live-only")) n.removeAttribute("hidden");
      if (n.hasAttribute("data-static-only")) n.setAttribute("hidden", "");
    }
  }

  const clonedBy = new WeakMap(); // a list's item → the <template> it was cloned from
  const boundWith = new WeakMap(); // a kept item → the JSON of the value it was last bound with

  function bindEach(tpl, data, mounted) {
    const items = get(data, tpl.dataset.each) || [];
    const old = [];
    for (let n = tpl.nextElementSibling; n && n.hasAttribute("data-item"); n = n.nextElementSibling) old.push(n);
    // data-each-keep: the items this template cloned are bound again in place (the build's are replaced)
    const kept = tpl.hasAttribute("data-each-keep") && old.every((n) => clonedBy.get(n) === tpl) ? old.slice(0, items.length) : [];
    old.slice(kept.length).forEach((n) => n.remove());
    kept.forEach((n, i) => {
      const json = JSON.stringify(items[i]);
      if (boundWith.get(n) !== json) bind(n, items[i], mounted); // unchanged: nothing to do
      boundWith.set(n, json);
    });
    const proto = tpl.content.firstElementChild;
    const clones = items.slice(kept.length).map((item) => {
      const clone = proto.cloneNode(true);
      clonedBy.set(clone, tpl);
      if (tpl.hasAttribute("data-each-keep")) boundWith.set(clone, JSON.stringify(item));
      if (mounted) asMounted(clone);
      bind(clone, item, mounted); // a list in the row: its clones are not in the page yet, so mounted is passed on
      return clone;
    });
    (kept.length ? kept[kept.length - 1] : tpl).after(...clones);
  }

  function bind(scope, data, mounted = Boolean(scope.closest("[data-widget][data-mounted]"))) {
    if (scope.matches(BOUND)) bindOne(scope, data);
    for (const node of scope.querySelectorAll(BOUND)) if (owns(scope, node)) bindOne(node, data);
    for (const tpl of scope.querySelectorAll("template[data-each]")) if (owns(scope, tpl)) bindEach(tpl, data, mounted);
    for (const sub of scope.querySelectorAll("[data-bind-scope]")) {
      if (sub !== scope && owns(scope, sub.parentElement)) bind(sub, get(data, sub.dataset.bindScope), mounted);
    }
  }

  function readForm(form, params) {
    const out = {};
    for (const [name, fallback] of Object.entries(params)) {
      const c = form.elements.namedItem(name);
      if (!c) continue;
      if (c.type === "checkbox") out[name] = c.checked;
      else if (typeof fallback === "number") {
        const v = Number.parseFloat(c.value);
        out[name] = Number.isFinite(v) ? v : fallback;
      } else out[name] = c.value;
    }
    return out;
  }

  /* A field is the reader's while they type in it. A call is made after every key, and
   * Python clamps what it gets ("8" of "8192" is below a minimum of 256): writing the value it
   * used back into the focused field made the next keys land after it ("256192"). So a value
   * for a field the reader has typed in since it last settled (its last "change": Enter, a
   * blur, an arrow key, a spinner) is held back, and put in the field when it settles, if the
   * reader's text is still the one it answered. A value equal to the field's as a number is
   * never written ("0.50" stays as typed). One mechanism for every control that writeForm fills. */
  const typing = new WeakSet(); // fields typed in since their last "change"
  const held = new WeakMap(); // field -> {text, from}: the value to show once it settles
  const watched = new WeakSet(); // forms with the listeners below

  function watch(form) {
    if (watched.has(form)) return;
    watched.add(form);
    form.addEventListener("input", (ev) => typing.add(ev.target), true);
    const settle = (ev) => {
      const c = ev.target;
      typing.delete(c);
      const h = held.get(c);
      held.delete(c);
      if (h && c.value === h.from) put(c, h.text);
    };
    form.addEventListener("change", settle, true);
    form.addEventListener("focusout", settle, true);
  }

  const same = (c, text) => (c.type === "number" || c.type === "range" ? c.value !== "" && Number(c.value) === Number(text) : c.value === text);

  function put(c, text) {
    if (same(c, text)) return held.delete(c);
    if (typing.has(c) && c === document.activeElement) return held.set(c, { text, from: c.value });
    held.delete(c);
    c.value = text;
  }

  function writeForm(form, values) {
    watch(form);
    for (const [name, v] of Object.entries(values)) {
      const c = form.elements.namedItem(name);
      if (!c || v === null || v === undefined) continue;
      if (c.type === "checkbox") c.checked = Boolean(v);
      else put(c, String(v));
    }
  }

  /* Python's f"{x:.{digits}f}" (|x| < 1e21). toFixed rounds the exact binary value, as Python
   * does, but an exact tie (0.0625 to 3 decimals) away from zero; Python rounds a tie to even. */
  function fixed(x, digits, grouping = false) {
    let s = x.toFixed(digits);
    const y = Math.abs(x) * 10 ** digits;
    if (y - Math.floor(y) === 0.5 && isTie(Math.abs(x), digits)) {
      const down = BigInt(Math.floor(y));
      const n = String(down % 2n === 0n ? down : down + 1n).padStart(digits + 1, "0");
      s = (x < 0 ? "-" : "") + (digits ? `${n.slice(0, -digits)}.${n.slice(-digits)}` : n);
    } else if (Object.is(x, -0)) s = "-" + s;
    return grouping ? s.replace(/^(-?\d+)/, (int) => int.replace(/\B(?=(\d{3})+$)/g, ",")) : s;
  }

  // exactly: is 2·y·10^digits an odd integer? (y = m·2^e, read from its bits)
  function isTie(y, digits) {
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, y);
    const bits = view.getBigUint64(0);
    const exp = Number((bits >> 52n) & 0x7ffn);
    let m = bits & ((1n << 52n) - 1n);
    if (exp) m |= 1n << 52n;
    let n = m * 5n ** BigInt(digits);
    let k = (exp ? exp - 1075 : -1074) + digits + 1;
    if (n === 0n) return false;
    while ((n & 1n) === 0n) { n >>= 1n; k++; }
    return k === 0;
  }

  const reducedMotion = () => Boolean(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);

  kv.kit = { el, fillRows, linked, theme, heatmap, plot, raster, reducedMotion, TEXT, bind, get, readForm, writeForm, watchForm: watch, fixed };
})();
