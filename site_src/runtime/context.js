/* kvlab runtime, part 4 (page): mounting widgets, reader intent, the widget context.
 *
 *   kvlab.register(name, {mount(root, ctx) → {activate()}})
 *
 * A widget mounts at once (its build-time figure is already on the page) and
 * goes live only on the reader's intent: a pointer, focus or key inside it, or
 * its "Make it live" button. Scrolling never starts a runtime. With Save-Data
 * on, only the button does. Once a runtime is ready in this visit, widgets
 * that need only ready runtimes go live as soon as they mount (the next page of
 * an instant navigation, for instance). Widgets mount again on every page that
 * mkdocs-material's instant navigation swaps in (document$).
 */
(function () {
  "use strict";

  const kv = window.kvlab;

  kv.register = function (name, def) {
    kv.widgets[name] = def;
    if (document.readyState !== "loading") mountAll();
  };

  const formatMB = (bytes) => (bytes / 1e6).toFixed(1) + " MB";
  const saveData = () => Boolean(navigator.connection && navigator.connection.saveData);
  /* Plotly draws most widgets' charts. Once a reader has made one widget live, its
   * bundle (the basic one, which starts without a long task) is fetched and
   * started when the page is next idle, so the next page's chart draws at once
   * (instant navigation keeps it). Not in an embed (one widget, no next page), not
   * with Save-Data on. */
  const whenIdle = (fn) => (window.requestIdleCallback ? requestIdleCallback(fn, { timeout: 3000 }) : setTimeout(fn, 1000));
  const RUNTIME_NAMES = { python: "Python (Pyodide, numpy, kvlab)", model: "the tiny model (onnxruntime-web)" };

  /* The context a widget's mount() receives: its root, build-time data and
   * parameters, and helpers that report into the widget's status line. */
  function makeContext(root) {
    const status = root.querySelector(".kv-status");
    const statusText = status && status.querySelector(".kv-status-text");
    const bar = status && status.querySelector("progress");
    let cancel = null; // the Cancel button beside the progress bar, made on the first download shown
    const parse = (sel) => {
      const el = root.querySelector(sel);
      return el ? JSON.parse(el.content.textContent) : {};
    };
    const ctx = {
      root,
      data: parse(":scope > template.kv-data"),
      params: parse(":scope > template.kv-params"),
      setState(state) {
        root.dataset.state = state;
        if (state !== "error" && status) status.classList.remove("kv-status-error");
      },
      say(text) {
        if (statusText) statusText.textContent = text;
      },
      /* A note that stays (unlike the status line), e.g. about ignored
       * settings. Each key has its own line, so clearing one keeps the others. */
      notice(text, key = "main") {
        let el = root.querySelector(`.kv-notice[data-key="${key}"]`);
        if (!el) {
          if (!text) return;
          el = document.createElement("p");
          el.className = `kv-notice kv-${key}`;
          el.dataset.key = key;
          el.setAttribute("role", "note");
          (status || root.firstElementChild).after(el);
        }
        el.textContent = text;
        el.hidden = !text;
      },
      showProgress(p) {
        if (!bar) return;
        if (p.done || !p.what) {
          bar.hidden = true;
          if (cancel) cancel.hidden = true;
          return;
        }
        bar.hidden = false;
        // a slow link: the reader can stop the download (kvlab.cancelLoading); the figure stays
        if (!cancel) {
          cancel = document.createElement("button");
          cancel.type = "button";
          cancel.className = "kv-cancel-button md-button";
          cancel.textContent = "Cancel";
          cancel.setAttribute("aria-label", "Cancel the download");
          cancel.addEventListener("click", () => kv.cancelLoading());
          bar.after(" ", cancel);
        }
        cancel.hidden = false;
        if (p.total) {
          bar.max = p.total;
          bar.value = p.loaded;
          ctx.say(`Loading ${p.what}: ${formatMB(p.loaded)} of ${formatMB(p.total)}`);
        } else {
          bar.removeAttribute("value");
          ctx.say(p.what);
        }
      },
      fail(err) {
        let msg = (err && err.message ? err.message : String(err)).replace(/\.+$/, "");
        // a host's Content-Security-Policy without 'wasm-unsafe-eval' (Chromium: "Refused to
        // compile or instantiate WebAssembly module…"; Firefox: "call to WebAssembly… blocked by CSP")
        if (/WebAssembly/i.test(msg) && /(Refused|CSP|Content Security Policy|unsafe-eval)/i.test(msg))
          msg = "this site's Content-Security-Policy does not allow WebAssembly, which Python and the model need: its script-src must include 'wasm-unsafe-eval' (the README's Content-Security-Policy section has the header to use)";
        root.dataset.state = "error";
        if (bar) bar.hidden = true;
        ctx.say(`Could not run this widget in your browser: ${msg}. The figure shows the last values computed.`);
        status && status.classList.add("kv-status-error");
        console.warn("kvlab widget", root.dataset.widget, err);
      },
      /* The widget loop: update(args) runs fn(args) — a kvlab Python function
       * by name, or an async JS function (the model) — and hands the result to
       * render(data). Latest input wins: while a call is in flight, newer args
       * replace older ones and only the newest runs next, so dragging a slider
       * never queues a backlog. The state goes loading → ready (or error, with
       * the figure kept; the next update tries again, on a fresh runtime if
       * the last one broke). A call whose runtime died under it is made again, once,
       * on a fresh runtime. */
      live(fn, render, describe) {
        let pending = null;
        let running = null;
        const once = typeof fn === "string" ? (args) => ctx.call(fn, args) : (args) => withProgress(() => fn(args));
        // a runtime that died under this call (bridge.js: a crash, or the watchdog) is started
        // again and the call made once more: no widget is left waiting; a second crash is shown
        const compute = async (args) => {
          try {
            return await once(args);
          } catch (err) {
            if (!(err instanceof kv.RuntimeCrashed)) throw err;
            ctx.say(`The ${err.role === "python" ? "Python" : "model"} runtime stopped, so it is starting again…`);
            return await once(args);
          }
        };
        return function update(args) {
          pending = { args };
          if (running) return running;
          ctx.setState("loading");
          running = (async () => {
            try {
              // input that comes while a result is drawn is computed and drawn next (it was dropped)
              while (pending) {
                let data;
                while (pending) {
                  const next = pending.args;
                  pending = null;
                  data = await compute(next);
                }
                await render(data);
                if (data && data.clamped && data.params) ctx.reportClamped(data);
                ctx.say(describe ? describe(data) : (data?.view?.status ?? data?.status ?? `Computed in your browser by kvlab.${fn}.`));
                // drawn: the form holds the values used (embed.js keeps the address bar in step)
                root.dispatchEvent(new CustomEvent("kvlab:rendered"));
              }
              ctx.setState("ready");
            } catch (err) {
              if (err instanceof kv.RuntimeCancelled) {
                pending = null;
                ctx.cancelled();
              } else ctx.fail(err);
            } finally {
              running = null;
            }
          })();
          return running;
        };
      },
      /* The widget loop, written once: read the widget's form (form.kv-controls), call fn
       * (ctx.live: latest input wins, clamped values put back into the form, the status line),
       * draw, and do it again on the reader's input. Returns {activate, update, call, data}:
       * mount() returns it (or an activate of its own that calls update).
       *   fn                 a kvlab function's name, or an async JS function (the model), as ctx.live
       *   opts.read(ev, data) the call's arguments (ev: the input event; none on activate or
       *                      update()); null or undefined: no call (the widget said why). Default:
       *                      kit.readForm(form, data.params), typed as the last result's params
       *   opts.sync          put back into the form before binding (kit.writeForm: never into the
       *                      field being typed in): true, the result's params; or a function of the
       *                      result giving the values
       *   opts.bind          false: draw binds what it shows itself (default: kit.bind(root, data))
       *   opts.draw(data, before) after binding: charts, rasters, what the binder cannot do
       *                      (before: the result drawn until now, or the build's)
       *   opts.describe(data) the status line after each result (ctx.live's; default: the one Python
       *                      wrote, result.view.status or result.status)
       *   opts.echo          {name: format}: how a slider's readout (<output name="<name>-out">)
       *                      shows its value while it moves (default: the value as it is)
       *   opts.debounce      ms after the last input before the call (typing in a text box)
       * data: the last result drawn (the build's until the first). update(ev): read, then call.
       * call(args): call with these arguments (a button's own). */
      form(fn, opts = {}) {
        const kit = kv.kit;
        const form = root.querySelector("form.kv-controls");
        const loop = { data: ctx.data };
        const compute = ctx.live(
          fn,
          async (result) => {
            const before = loop.data;
            loop.data = result;
            if (opts.sync) kit.writeForm(form, opts.sync === true ? result.params : opts.sync(result));
            if (opts.bind !== false) kit.bind(root, result);
            if (opts.draw) await opts.draw(result, before);
          },
          opts.describe
        );
        loop.call = compute;
        loop.update = (ev) => {
          const args = opts.read ? opts.read(ev, loop.data) : kit.readForm(form, loop.data.params);
          return args === null || args === undefined ? undefined : compute(args);
        };
        loop.activate = () => loop.update();
        const echo = opts.echo || {};
        let timer = null;
        form.addEventListener("input", (ev) => {
          // a slider's readout follows it while it moves (the result's own value is bound after)
          const out = ev.target.name && form.elements.namedItem(`${ev.target.name}-out`);
          if (out && out.tagName === "OUTPUT") out.value = echo[ev.target.name] ? echo[ev.target.name](ev.target.value) : ev.target.value;
          if (!opts.debounce) return loop.update(ev);
          clearTimeout(timer);
          timer = setTimeout(() => loop.update(ev), opts.debounce);
        });
        return loop;
      },
      /* Python clamps out-of-range input and says so in data.clamped
       * ({name: {requested, used}}): put the values used back into the form (kit.writeForm:
       * never into the field the reader is typing in; it shows the value used once they press
       * Enter or leave it), say "clamped to …" beside each such field (.kv-field-note, the
       * field's description), and tell the reader in a note of the widget's own (.kv-clamped),
       * naming each control as its label does (fieldName). ctx.live calls it after every
       * drawn result that carries data.clamped, so every widget does it alike. */
      reportClamped(data) {
        const form = root.querySelector("form.kv-controls");
        const clamped = Object.entries(data.clamped || {});
        if (form) {
          kv.kit.writeForm(form, Object.fromEntries(clamped.map(([k]) => [k, data.params[k]])));
          fieldNotes(form, data.clamped || {});
        }
        const list = clamped.map(([k, c]) => `${fieldName(form, k)}: asked ${short(c.requested)}, used ${short(c.used)}`);
        ctx.notice(list.length ? `Out of range, so clamped: ${list.join("; ")}.` : "", "clamped");
      },
      /* The download was cancelled: the build's figure stays, and "Make it live" is offered again
       * (mountOne sets root.kvOffer). */
      cancelled() {
        if (bar) bar.hidden = true;
        if (cancel) cancel.hidden = true;
        ctx.setState("static");
        if (root.kvOffer) root.kvOffer();
        ctx.say("Download cancelled: the figure is the one computed when the page was built. “Make it live” starts again.");
      },
      /* kvlab.model() with its loading progress shown in this widget. */
      model: () => withProgress(() => kv.model()),
      /* kvlab.call with progress shown in this widget while Python loads. */
      call: (fn, kwargs) => withProgress(() => kv.call(fn, kwargs)),
    };
    async function withProgress(work) {
      const off = kv.onProgress((p) => !p.done && ctx.showProgress(p));
      try {
        return await work();
      } finally {
        off();
        if (bar) bar.hidden = true;
        if (cancel) cancel.hidden = true;
      }
    }
    return ctx;
  }

  /* A value as the reader reads it in a note: a pasted 5,000-digit number is not repeated in full. */
  const short = (v) => {
    const t = String(v);
    return t.length > 24 ? `${t.slice(0, 12)}…${t.slice(-6)} (${t.length.toLocaleString("en-US")} characters)` : t;
  };
  kv.shortText = short; // embed.js names a link's values the same way

  /* "clamped to 256" beside each clamped field of the form (after the field, in its label; the
   * field's aria-describedby names it), and no such note beside the others. */
  function fieldNotes(form, clamped) {
    for (const c of form.querySelectorAll("input, select, textarea")) {
      const entry = c.name ? clamped[c.name] : undefined;
      fieldNote(c, "clamped", entry ? `clamped to ${short(entry.used)}` : "");
    }
  }

  /* A note of one kind ("clamped", "paste") right after a control, and its description (aria-
   * describedby); "" hides it. A clamp note is aria-hidden, so a label that wraps the control
   * does not read it as part of the control's name. */
  function fieldNote(c, kind, text) {
    let note = c.parentElement && c.parentElement.querySelector(`:scope > .kv-field-note[data-for="${CSS.escape(c.name)}"][data-kind="${kind}"]`);
    if (!note) {
      if (!text) return;
      note = document.createElement("small");
      note.className = `kv-field-note kv-field-${kind}`;
      note.dataset.for = c.name;
      note.dataset.kind = kind;
      note.id = `kv-${kv.widgetKey(c.closest("[data-widget]"))}-${c.name}-${kind}`;
      // a refused paste is said at once (an alert); a clamp is the field's description, read with it
      if (kind === "paste") note.setAttribute("role", "alert");
      else note.setAttribute("aria-hidden", "true");
      c.after(note);
      c.setAttribute("aria-describedby", [c.getAttribute("aria-describedby"), note.id].filter(Boolean).join(" "));
    }
    note.hidden = !text;
    note.textContent = text;
  }

  /* A paste bigger than a widget reads (kv.inputLimits.textBytes) never reaches the text box: 10-20 MB
   * put in a <textarea> held the page for seconds before the size check could say no. The reader is
   * told beside the box, at once; what the box held stays. */
  function guardPastes(root) {
    for (const area of root.querySelectorAll("textarea")) {
      area.addEventListener("paste", (ev) => {
        const text = ev.clipboardData ? ev.clipboardData.getData("text/plain") : "";
        const limit = kv.inputLimits.textBytes;
        // bytes >= characters: only a paste under the limit in characters needs encoding to be sure
        const bytes = text.length > limit ? text.length : new TextEncoder().encode(text).length;
        if (bytes <= limit) return fieldNote(area, "paste", "");
        ev.preventDefault();
        const size = bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${Math.round(bytes / 1024)} KB`;
        fieldNote(area, "paste", `Not pasted: ${size}${text.length > limit ? " or more" : ""} is more than the ${limit / 1024} KB this box reads. Paste the part that matters (a log's start-up lines, a config.json).`);
      });
      area.addEventListener("input", () => fieldNote(area, "paste", ""));
    }
  }

  /* What the reader calls a control: its label's text up to any "(" (the label says
   * "Shared prefix (tokens)", the note "Shared prefix"), else its aria-label, else its name. */
  function fieldName(form, name) {
    const el = form && form.elements.namedItem(name);
    if (!(el instanceof Element)) return name;
    const label = el.closest("label");
    const span = label && label.querySelector(":scope > span");
    const text = (span ? span.textContent : el.getAttribute("aria-label") || "").split(" (")[0].trim();
    return text || name;
  }
  kv.fieldName = fieldName; // embed.js names a link's clamped settings the same way

  /* The offer in the status line: what going live downloads, and a button. */
  function offerLive(root, ctx, runtimes, activate) {
    const status = root.querySelector(".kv-status");
    if (!status) return;
    const cold = runtimes.filter((r) => kv.runtimeState(r) !== "ready");
    // the runtimes not yet running, and the files the widget's function fetches on its first call
    const files = (root.dataset.files || "").split(" ").filter(Boolean);
    const bytes = cold.reduce((n, r) => n + kv.runtimeBytes(r), 0) + kv.assetBytes(files);
    const names = runtimes.map((r) => RUNTIME_NAMES[r]).join(" and ");
    ctx.say(
      saveData()
        ? `Data saver is on, so nothing downloads until you ask: “Make it live” runs ${names} in your browser (${formatMB(bytes)}).`
        : `This figure was computed when the page was built. Use a control, or “Make it live”, to run ${names} in your browser (${formatMB(bytes)}, once per visit).`
    );
    let button = status.querySelector(".kv-live-button");
    if (!button) {
      button = document.createElement("button");
      button.type = "button";
      button.className = "kv-live-button md-button";
      button.textContent = "Make it live";
      status.append(" ", button);
    }
    button.setAttribute("aria-label", `Make it live: download ${formatMB(bytes)} and run ${names} in your browser`);
    button.addEventListener("click", () => {
      button.remove();
      activate(true);
    }, { once: true });
  }

  function mountAll() {
    document.querySelectorAll("[data-widget]").forEach(mountOne);
  }

  function mountOne(root) {
    const def = kv.widgets[root.dataset.widget];
    if (!def || root.dataset.mounted) return;
    root.dataset.mounted = "true";
    // attributes, not the .hidden property: SVG elements have no .hidden
    root.querySelectorAll("[data-live-only]").forEach((el) => el.removeAttribute("hidden"));
    root.querySelectorAll("[data-static-only]").forEach((el) => el.setAttribute("hidden", ""));
    root.querySelectorAll("form.kv-controls").forEach((f) => {
      f.addEventListener("submit", (ev) => ev.preventDefault());
      kv.kit.watchForm(f); // what the reader types is theirs from the first key (kit.writeForm)
    });
    guardPastes(root);
    const ctx = makeContext(root);
    // a link's settings go into the form first, so mount() reads them: an embed's
    // ?name=value, a content page's ?<key>.name=value (embed.js)
    if (root.dataset.embed === "true") kv.mountEmbedPage(root, ctx);
    else kv.mountLinkedSettings(root, ctx);
    let instance;
    try {
      instance = def.mount(root, ctx) || {};
    } catch (err) {
      ctx.fail(err);
      return;
    }
    if (root.dataset.embed !== "true") {
      kv.mountEmbedControl(root);
      kv.mountLinkControl(root);
    }
    const runtimes = (root.dataset.runtimes || "python").split(" ").filter(Boolean);
    let activated = false;
    const activate = (explicit) => {
      if (activated || (!explicit && saveData())) return;
      activated = true;
      root.dataset.activated = "true";
      // a widget that draws with Plotly fetches and compiles it while its runtime
      // downloads, not after; a heatmap (.kv-hm, kit.heatmap) needs no Plotly
      if (root.querySelector(".kv-plot:not(.kv-hm)")) kv.plotly().catch(() => {});
      const button = root.querySelector(".kv-live-button");
      if (button) button.remove();
      // a link's settings (an embed's or a content page's): the widget reads its form on
      // "input", as when a reader moves a control; then activate() computes from them
      const form = root.querySelector("form.kv-controls");
      if (root.dataset.embedApplied && form) form.dispatchEvent(new Event("input", { bubbles: true }));
      delete root.dataset.embedApplied;
      ["embed-applied", "link-applied"].forEach((key) => ctx.notice("", key)); // the figure follows them now
      Promise.resolve(instance.activate && instance.activate())
        .then(() => root.dataset.embed !== "true" && !saveData() && whenIdle(() => kv.plotly().catch(() => {})))
        .catch((err) => (err instanceof kv.RuntimeCancelled ? ctx.cancelled() : ctx.fail(err)));
    };
    root.kvActivate = activate;
    // after a cancelled download (ctx.cancelled): not live, and the offer made again
    root.kvOffer = () => {
      activated = false;
      delete root.dataset.activated;
      offerLive(root, ctx, runtimes, activate);
    };
    // intent: any control of the widget; not its Embed or Link button or panel (.kv-embed-*),
    // its live button (which says what it downloads), a link, or a code block (copying or
    // scrolling a command)
    // A press goes live when it ends: going live rewrites the status line above the controls,
    // and a button that moved between pointerdown and pointerup never got its click (Reset,
    // Generate: the reader's first click did nothing but make the widget live). A touch the
    // browser takes for scrolling ends in pointercancel: scrolling is not intent.
    // (and not a control marked data-no-intent: it works on the build's data, as qkv's token picks do)
    const intent = (ev) => !ev.target.closest(".kv-embed-panel, .kv-embed-button, .kv-live-button, pre, a, [data-no-intent]");
    let pressing = false;
    root.addEventListener("pointerdown", (ev) => {
      if (!intent(ev) || activated || pressing) return;
      pressing = true;
      let timer = null;
      const done = (end) => {
        if (!pressing) return;
        pressing = false;
        clearTimeout(timer);
        ["pointerup", "pointercancel"].forEach((t) => window.removeEventListener(t, done, true));
        if (!end || end.type !== "pointercancel") activate(false);
      };
      ["pointerup", "pointercancel"].forEach((t) => window.addEventListener(t, done, true));
      timer = setTimeout(done, 2000); // a press held (or lost) that long: live anyway
    });
    ["focusin", "keydown"].forEach((type) => root.addEventListener(type, (ev) => intent(ev) && !pressing && activate(false)));
    if (runtimes.every((r) => kv.runtimeState(r) === "ready")) activate(true);
    else offerLive(root, ctx, runtimes, activate);
  }
  kv.mountAll = mountAll;

  // Each widget mounts in a task of its own: on a first load document$ emits inside material's
  // DOMContentLoaded handler, a long task already on a big page, and the page's widgets together
  // were one more (bench/results/2026-12-02-lighthouse-session9.md). A widget's
  // static figure and reserved controls are on screen before it mounts.
  function start() {
    const roots = Array.from(document.querySelectorAll("[data-widget]"));
    const next = () => {
      const root = roots.shift();
      if (root) {
        if (root.isConnected) mountOne(root); // not a page the reader has already left
        setTimeout(next, 0);
      } else if (kv.fillGallerySnippets) kv.fillGallerySnippets();
    };
    setTimeout(next, 0);
  }
  // mkdocs-material's instant navigation swaps pages without reloading this
  // script; document$ emits for the first page and for every page after it.
  // (Both ways: mounting is idempotent, and document$ may not emit where
  // material's own start fails, e.g. storage refused in a file:// iframe.)
  if (window.document$ && typeof window.document$.subscribe === "function") window.document$.subscribe(() => start());
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
