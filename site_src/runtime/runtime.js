/* kvlab browser runtime.
 *
 * window.kvlab exposes:
 *   python()            Pyodide + numpy + our kvlab package, loaded once per page
 *   call(fn, kwargs)    run kvlab.<fn>(**kwargs) in Pyodide → plain JS data
 *   plotly()            the Plotly bundle, loaded once per page
 *   register(name, def) a widget: def.mount(root, ctx) → {activate()}
 *   onProgress(cb)      loading progress: {what, loaded, total, done}
 *
 * Nothing heavy loads during page load: a widget activates when the reader
 * first interacts with it, or when it scrolls into view after the page has
 * loaded. Every URL is relative to this script, so the site works under any
 * sub-path and from file://.
 */
(function () {
  "use strict";

  const kv = (window.kvlab = window.kvlab || {});
  const ASSETS = new URL("../", document.currentScript.src).href; // …/assets/
  const realFetch = window.fetch.bind(window);
  const manifest = window.kvlabManifest || { files: {} };
  kv.assets = ASSETS;
  kv.manifest = manifest;
  kv.widgets = kv.widgets || {};

  // ------------------------------------------------------------------ progress

  const progressListeners = new Set();
  const tasks = new Map(); // "python" | "model" → {what, loaded, total, done}
  let progressState = { what: "", loaded: 0, total: 0, done: true };

  kv.onProgress = function (cb) {
    progressListeners.add(cb);
    cb(progressState);
    return () => progressListeners.delete(cb);
  };

  /* Each loader reports its own task; listeners see them combined (the labels
   * of the unfinished ones, their bytes added up), so Python and the model
   * can load at the same time without hiding each other's progress. */
  function reportProgress(task, update) {
    tasks.set(task, Object.assign({ what: "", loaded: 0, total: 0, done: false }, tasks.get(task), update));
    const open = [...tasks.values()].filter((t) => !t.done);
    progressState = {
      what: open.map((t) => t.what).filter(Boolean).join(" + "),
      loaded: open.reduce((n, t) => n + (t.total ? t.loaded : 0), 0),
      total: open.every((t) => t.total) ? open.reduce((n, t) => n + t.total, 0) : 0,
      done: open.length === 0,
    };
    progressListeners.forEach((cb) => cb(progressState));
  }
  kv.reportProgress = reportProgress;

  // ------------------------------------------------------------------ offline payloads

  /* In the offline (file://) build every binary also exists as <file>.js, a
   * classic script that calls kvlab.payloads.register(path, base64). */
  if (manifest.offline) {
    const waiting = new Map();
    kv.payloads = {
      register(path, b64) {
        const resolve = waiting.get(path);
        waiting.delete(path);
        if (resolve) resolve(b64);
      },
      async bytes(path, onBytes) {
        const b64 = await new Promise((resolve, reject) => {
          waiting.set(path, resolve);
          loadScript(ASSETS + path + ".js").catch(reject);
        });
        const bin = atob(b64);
        const out = new Uint8Array(bin.length);
        for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
        onBytes(out.length);
        return out;
      },
    };
  }

  // ------------------------------------------------------------------ loading

  function loadScript(url) {
    return new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = url;
      s.async = false;
      s.onload = () => resolve();
      s.onerror = () => reject(new Error("could not load " + url));
      document.head.appendChild(s);
    });
  }

  kv.loadScript = loadScript;

  const sizeOf = (path) => (manifest.files[path] || {}).size || 0;

  /* Fetch assets/<path> as bytes, reporting bytes received. */
  async function fetchBytes(path, onBytes) {
    if (kv.payloads) return kv.payloads.bytes(path, onBytes); // offline (file://) build
    const res = await realFetch(ASSETS + path);
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
    if (!res.body || !res.body.getReader) {
      const buf = new Uint8Array(await res.arrayBuffer());
      onBytes(buf.length);
      return buf;
    }
    const reader = res.body.getReader();
    const chunks = [];
    let received = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      received += value.length;
      onBytes(value.length);
    }
    const out = new Uint8Array(received);
    let offset = 0;
    for (const c of chunks) {
      out.set(c, offset);
      offset += c.length;
    }
    return out;
  }

  /* Fetch several assets in parallel under one progress label. */
  async function fetchAll(task, what, paths) {
    const total = paths.reduce((n, p) => n + sizeOf(p), 0);
    let loaded = 0;
    reportProgress(task, { what, loaded, total, done: false });
    const bytes = await Promise.all(
      paths.map((p) =>
        fetchBytes(p, (n) => {
          loaded += n;
          reportProgress(task, { what, loaded: Math.min(loaded, total || loaded), total: total || loaded });
        })
      )
    );
    return Object.fromEntries(paths.map((p, i) => [p, bytes[i]]));
  }
  kv.fetchAll = fetchAll;

  /* Pyodide fetches its own files; answer those we already hold from memory.
   * Narrow on purpose: only exact URLs we preloaded, each served once. */
  const preloaded = new Map();
  function installFetchShim() {
    if (window.fetch.kvlabShim) return;
    const shim = function (input, init) {
      const url = new URL(input instanceof Request ? input.url : String(input), document.baseURI).href;
      const bytes = preloaded.get(url);
      if (!bytes) return realFetch(input, init);
      const type = url.endsWith(".wasm") ? "application/wasm" : url.endsWith(".json") ? "application/json" : "application/octet-stream";
      return Promise.resolve(new Response(bytes, { status: 200, headers: { "Content-Type": type } }));
    };
    shim.kvlabShim = true;
    window.fetch = shim;
  }

  let pythonPromise = null;
  kv.python = function () {
    if (!pythonPromise) {
      pythonPromise = loadPython().catch((err) => {
        pythonPromise = null; // a later click may retry
        reportProgress("python", { what: "", done: true });
        throw err;
      });
    }
    return pythonPromise;
  };

  async function loadPython() {
    const dir = "vendor/pyodide/";
    const big = [dir + "pyodide.asm.wasm", dir + "python_stdlib.zip", dir + "pyodide-lock.json", dir + manifest.numpyWheel, manifest.kvlabZip];
    const label = `Python (Pyodide ${manifest.pyodideVersion}) with numpy and kvlab`;
    const bytes = await fetchAll("python", label, big);
    for (const p of big.slice(0, 4)) preloaded.set(new URL(ASSETS + p).href, bytes[p]);
    installFetchShim();
    reportProgress("python", { what: "Starting Python…", loaded: 0, total: 0 });
    // A classic script tag first: pyodide.js then skips its dynamic import (file://).
    await loadScript(ASSETS + dir + "pyodide.asm.js");
    await loadScript(ASSETS + dir + "pyodide.js");
    const py = await window.loadPyodide({ indexURL: ASSETS + dir, stdout: () => {}, stderr: (s) => console.warn(s) });
    reportProgress("python", { what: "Loading numpy…", loaded: 0, total: 0 });
    await py.loadPackage("numpy", { messageCallback: () => {}, errorCallback: (s) => console.warn(s) });
    const site = py.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
    py.unpackArchive(bytes[manifest.kvlabZip], "zip", { extractDir: site });
    py.pyimport("kvlab");
    reportProgress("python", { what: "Python ready", done: true });
    return py;
  }

  /* kvlab.<fn>(**kwargs) in Pyodide, through JSON both ways. A Python
   * exception becomes a JS Error carrying Python's one-line message. */
  kv.call = async function (fn, kwargs) {
    const py = await kv.python();
    const bridge = py.pyimport("kvlab.bridge");
    const reply = JSON.parse(bridge.call_json(fn, JSON.stringify(kwargs || {})));
    bridge.destroy();
    if (reply.error) throw new Error(reply.error);
    return reply.result;
  };

  let plotlyPromise = null;
  kv.plotly = function () {
    if (!plotlyPromise) {
      plotlyPromise = loadScript(ASSETS + "vendor/plotly/plotly-cartesian.min.js").then(() => window.Plotly);
      plotlyPromise.catch(() => (plotlyPromise = null));
    }
    return plotlyPromise;
  };

  // ------------------------------------------------------------------ embeds

  const SITE_ROOT = new URL("../", ASSETS).href;

  function embedURL(name) {
    return new URL(manifest.directoryUrls ? `embed/${name}/` : `embed/${name}.html`, SITE_ROOT).href;
  }

  function escapeAttr(text) {
    return String(text).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  }

  kv.embedSnippet = function (name, title, height, query) {
    const src = embedURL(name) + (query || "");
    return (
      `<iframe src="${escapeAttr(src)}" title="${escapeAttr(title)}" loading="lazy" width="100%" height="${height}" ` +
      `style="border:0;max-width:100%" data-kvlab-embed></iframe>\n` +
      `<script src="${escapeAttr(new URL("assets/kvlab/embed-host.js", SITE_ROOT).href)}" defer></script>`
    );
  };

  /* The Embed button: show the snippet (with the widget's current settings). */
  function mountEmbedControl(root) {
    const button = root.querySelector(".kv-embed-button");
    const panel = button && root.querySelector(".kv-embed-panel");
    if (!panel) return;
    const area = panel.querySelector("textarea");
    const copied = panel.querySelector(".kv-embed-copied");
    const title = root.querySelector(".kv-widget-title").textContent;
    const currentQuery = () => {
      const form = root.querySelector("form.kv-controls");
      if (!form) return "";
      const q = new URLSearchParams();
      for (const el of form.elements) {
        if (!el.name || el.type === "submit" || el.tagName === "OUTPUT") continue;
        q.set(el.name, el.type === "checkbox" ? String(el.checked) : el.value);
      }
      return "?" + q.toString();
    };
    button.addEventListener("click", () => {
      const open = panel.hidden;
      panel.hidden = !open;
      button.setAttribute("aria-expanded", String(open));
      if (open) {
        area.value = kv.embedSnippet(root.dataset.widget, title, root.dataset.embedHeight, currentQuery());
        area.focus();
        area.select();
      }
    });
    panel.querySelector(".kv-embed-copy").addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(area.value);
        copied.textContent = "Copied.";
      } catch (err) {
        area.focus();
        area.select();
        copied.textContent = "Press Ctrl+C (⌘C) to copy the selected snippet.";
      }
    });
  }

  /* ?name=value settings on an embed page: only the widget's own controls,
   * numbers clamped to the control's min/max and step, choices checked
   * against the options. Returns what was ignored, to be told to the reader. */
  kv.applyQueryParams = function (root, search) {
    const form = root.querySelector("form.kv-controls");
    const ignored = [];
    let applied = 0;
    for (const [key, raw] of new URLSearchParams(search)) {
      const el = form && form.elements.namedItem(key);
      if (!el || !el.name || el.tagName === "OUTPUT") {
        ignored.push(key);
        continue;
      }
      if (el.type === "checkbox") {
        if (/^(1|true|yes|on)$/i.test(raw)) el.checked = true;
        else if (/^(0|false|no|off)$/i.test(raw)) el.checked = false;
        else {
          ignored.push(key);
          continue;
        }
      } else if (el.type === "range" || el.type === "number") {
        let v = Number(raw);
        if (raw.trim() === "" || !Number.isFinite(v)) {
          ignored.push(key);
          continue;
        }
        const min = el.min === "" ? -Infinity : Number(el.min);
        const max = el.max === "" ? Infinity : Number(el.max);
        v = Math.min(max, Math.max(min, v));
        const step = Number(el.step);
        if (step > 0 && Number.isFinite(min)) v = min + Math.round((v - min) / step) * step;
        el.value = String(Number(v.toFixed(6)));
      } else if (el.tagName === "SELECT") {
        if (![...el.options].some((o) => o.value === raw)) {
          ignored.push(key);
          continue;
        }
        el.value = raw;
      } else {
        el.value = raw.slice(0, Number(el.maxLength) > 0 ? Number(el.maxLength) : 2000);
      }
      applied += 1;
    }
    return { applied, ignored };
  };

  /* On an embed page: tell the host page our height whenever it changes. */
  function postHeight() {
    const article = document.querySelector(".kv-widget");
    if (!article || window.parent === window) return;
    const height = Math.ceil(article.getBoundingClientRect().bottom + window.scrollY + 24);
    window.parent.postMessage({ type: "kvlab:resize", height }, "*");
  }

  function mountEmbedPage(root, ctx) {
    document.documentElement.classList.add("kv-embed-page");
    if ("ResizeObserver" in window) new ResizeObserver(postHeight).observe(root);
    window.addEventListener("load", postHeight);
    postHeight();
    if (!location.search) return;
    const { applied, ignored } = kv.applyQueryParams(root, location.search);
    if (ignored.length) ctx.notice(`Ignored ${ignored.map((k) => `“${k}”`).join(", ")}: not a setting of this widget, or not a valid value.`, "embed");
    if (applied) {
      const form = root.querySelector("form.kv-controls");
      whenPageLoaded(() => form.dispatchEvent(new Event("input", { bubbles: true })));
    }
  }

  /* The gallery page: snippets with this site's absolute URLs. */
  function fillGallerySnippets() {
    document.querySelectorAll(".kv-gallery-item").forEach((item) => {
      const code = item.querySelector(".kv-snippet code");
      const frame = item.querySelector("iframe");
      code.textContent = kv.embedSnippet(item.dataset.embedName, frame.title.replace(/ \(live preview\)$/, ""), item.dataset.embedHeight, "");
    });
  }

  // ------------------------------------------------------------------ widgets

  kv.register = function (name, def) {
    kv.widgets[name] = def;
    if (document.readyState !== "loading") mountAll();
  };

  function formatMB(bytes) {
    return (bytes / 1e6).toFixed(1) + " MB";
  }

  /* The context a widget's mount() receives: its root, build-time data and
   * parameters, and helpers that report into the widget's status line. */
  function makeContext(root) {
    const status = root.querySelector(".kv-status");
    const statusText = status && status.querySelector(".kv-status-text");
    const bar = status && status.querySelector("progress");
    const parse = (sel) => {
      const el = root.querySelector(sel);
      return el ? JSON.parse(el.textContent) : {};
    };
    const ctx = {
      root,
      data: parse(":scope > script.kv-data"),
      params: parse(":scope > script.kv-params"),
      setState(state) {
        root.dataset.state = state;
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
          return;
        }
        bar.hidden = false;
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
        const msg = err && err.message ? err.message : String(err);
        root.dataset.state = "error";
        if (bar) bar.hidden = true;
        ctx.say(`Could not run this widget in your browser: ${msg}. The figure shows the values computed when the page was built.`);
        status && status.classList.add("kv-status-error");
        console.warn("kvlab widget", root.dataset.widget, err);
      },
      /* The usual widget loop: update(args) runs kvlab.<fn>(**args) in Pyodide
       * and hands the result to render(data). Latest input wins: while a call
       * is in flight, newer args replace older ones and only the newest runs
       * next, so dragging a slider never queues a backlog. The state goes
       * loading → ready (or error, with the static figure kept). */
      live(fn, render, describe) {
        let pending = null;
        let running = null;
        return function update(args) {
          pending = args;
          if (running) return running;
          ctx.setState("loading");
          running = (async () => {
            try {
              let data;
              while (pending) {
                const next = pending;
                pending = null;
                data = await ctx.call(fn, next);
              }
              await render(data);
              ctx.say(describe ? describe(data) : `Computed in your browser by kvlab.${fn}.`);
              ctx.setState("ready");
            } catch (err) {
              ctx.fail(err);
            } finally {
              running = null;
            }
          })();
          return running;
        };
      },
      /* Python clamps out-of-range input and says so in data.clamped
       * ({name: {requested, used}}): put the values used back into the form
       * and tell the reader, in a note of its own (.kv-clamped). */
      reportClamped(data, names = {}) {
        const form = root.querySelector("form.kv-controls");
        const clamped = Object.entries(data.clamped || {});
        for (const [k] of clamped) if (form && form.elements.namedItem(k)) form.elements.namedItem(k).value = data.params[k];
        const list = clamped.map(([k, c]) => `${names[k] || k}: asked ${c.requested}, used ${c.used}`);
        ctx.notice(list.length ? `Out of range, so clamped: ${list.join("; ")}.` : "", "clamped");
      },
      /* kvlab.model() with its loading progress shown in this widget. */
      async model() {
        const off = kv.onProgress((p) => !p.done && ctx.showProgress(p));
        try {
          return await kv.model();
        } finally {
          off();
          if (bar) bar.hidden = true;
        }
      },
      /* kvlab.call with progress shown in this widget while Python loads. */
      async call(fn, kwargs) {
        const off = kv.onProgress((p) => {
          if (!p.done) ctx.showProgress(p);
        });
        try {
          return await kv.call(fn, kwargs);
        } finally {
          off();
          if (bar) bar.hidden = true;
          status && status.classList.remove("kv-status-error");
        }
      },
    };
    return ctx;
  }

  function mountAll() {
    document.querySelectorAll("[data-widget]").forEach((root) => {
      const def = kv.widgets[root.dataset.widget];
      if (!def || root.dataset.mounted) return;
      root.dataset.mounted = "true";
      // attributes, not the .hidden property: SVG elements have no .hidden
      root.querySelectorAll("[data-live-only]").forEach((el) => el.removeAttribute("hidden"));
      root.querySelectorAll("[data-static-only]").forEach((el) => el.setAttribute("hidden", ""));
      const ctx = makeContext(root);
      let instance;
      try {
        instance = def.mount(root, ctx) || {};
      } catch (err) {
        ctx.fail(err);
        return;
      }
      if (root.dataset.embed === "true") mountEmbedPage(root, ctx);
      else mountEmbedControl(root);
      let activated = false;
      const activate = () => {
        if (activated) return;
        activated = true;
        observer && observer.unobserve(root);
        Promise.resolve(instance.activate && instance.activate()).catch((err) => ctx.fail(err));
      };
      root.kvActivate = activate;
      ["pointerdown", "focusin", "keydown"].forEach((type) => root.addEventListener(type, activate, { once: true }));
      whenPageLoaded(() => observer && observer.observe(root));
    });
  }

  const observer =
    "IntersectionObserver" in window
      ? new IntersectionObserver((entries) => {
          entries.forEach((e) => e.isIntersecting && e.target.kvActivate && e.target.kvActivate());
        }, { rootMargin: "100px" })
      : null;

  /* After the load event and an idle moment: never compete with page load. */
  function whenPageLoaded(fn) {
    const later = () => (window.requestIdleCallback ? requestIdleCallback(fn, { timeout: 1500 }) : setTimeout(fn, 200));
    if (document.readyState === "complete") later();
    else window.addEventListener("load", later, { once: true });
  }

  function start() {
    mountAll();
    fillGallerySnippets();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
