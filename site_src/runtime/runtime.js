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
  let progressState = { what: "", loaded: 0, total: 0, done: false };

  kv.onProgress = function (cb) {
    progressListeners.add(cb);
    cb(progressState);
    return () => progressListeners.delete(cb);
  };

  function reportProgress(update) {
    progressState = Object.assign({}, progressState, update);
    progressListeners.forEach((cb) => cb(progressState));
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
  async function fetchAll(what, paths) {
    const total = paths.reduce((n, p) => n + sizeOf(p), 0);
    let loaded = 0;
    reportProgress({ what, loaded, total, done: false });
    const bytes = await Promise.all(
      paths.map((p) =>
        fetchBytes(p, (n) => {
          loaded += n;
          reportProgress({ what, loaded: Math.min(loaded, total || loaded), total: total || loaded });
        })
      )
    );
    return Object.fromEntries(paths.map((p, i) => [p, bytes[i]]));
  }

  /* Pyodide fetches its own files; answer those we already hold from memory.
   * Narrow on purpose: only exact URLs we preloaded, each served once. */
  const preloaded = new Map();
  function installFetchShim() {
    if (window.fetch.kvlabShim) return;
    const shim = function (input, init) {
      const url = new URL(typeof input === "string" ? input : input.url, document.baseURI).href;
      const bytes = preloaded.get(url);
      if (!bytes) return realFetch(input, init);
      preloaded.delete(url);
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
        reportProgress({ what: "", done: false, error: String(err && err.message ? err.message : err) });
        throw err;
      });
    }
    return pythonPromise;
  };

  async function loadPython() {
    const dir = "vendor/pyodide/";
    const big = [dir + "pyodide.asm.wasm", dir + "python_stdlib.zip", dir + "pyodide-lock.json", dir + manifest.numpyWheel, manifest.kvlabZip];
    const label = `Python (Pyodide ${manifest.pyodideVersion}) with numpy and kvlab`;
    const bytes = await fetchAll(label, big);
    for (const p of big.slice(0, 4)) preloaded.set(new URL(ASSETS + p).href, bytes[p]);
    installFetchShim();
    reportProgress({ what: "Starting Python…" });
    // A classic script tag first: pyodide.js then skips its dynamic import (file://).
    await loadScript(ASSETS + dir + "pyodide.asm.js");
    await loadScript(ASSETS + dir + "pyodide.js");
    const py = await window.loadPyodide({ indexURL: ASSETS + dir, stdout: () => {}, stderr: (s) => console.warn(s) });
    reportProgress({ what: "Loading numpy…" });
    await py.loadPackage("numpy", { messageCallback: () => {}, errorCallback: (s) => console.warn(s) });
    const site = py.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
    py.unpackArchive(bytes[manifest.kvlabZip], "zip", { extractDir: site });
    py.pyimport("kvlab");
    reportProgress({ what: "Python ready", done: true });
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
      root.querySelectorAll("[data-live-only]").forEach((el) => (el.hidden = false));
      root.querySelectorAll("[data-static-only]").forEach((el) => (el.hidden = true));
      const ctx = makeContext(root);
      let instance;
      try {
        instance = def.mount(root, ctx) || {};
      } catch (err) {
        ctx.fail(err);
        return;
      }
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

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
  else mountAll();
})();
