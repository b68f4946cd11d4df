/* kvlab runtime, part 1 (page): the manifest, progress, and the two transports.
 *
 *   kvlab.manifest / kvlab.assets   what the build produced (sizes, hashes), where it lives
 *   kvlab.onProgress(cb)            loading progress of every runtime: {what, loaded, total, done}
 *   kvlab.loadScript(url)           a classic <script> (works from file:// too)
 *   kvlab.payloads.base64(path)     offline build only: a binary as base64, from its <file>.js
 *   kvlab.plotly()                  the Plotly bundle, once per visit
 *
 * Every URL is relative to this script, so the site works under any sub-path
 * and from file://. Nothing here downloads anything until a widget asks.
 */
(function () {
  "use strict";

  const kv = (window.kvlab = window.kvlab || {});
  kv.assets = new URL("../", document.currentScript.src).href; // …/assets/
  kv.manifest = window.kvlabManifest || { files: {} };
  kv.widgets = kv.widgets || {};
  const manifest = kv.manifest;
  // The started runtime's memory snapshot (sitebuild/snapshot.py) skips Python's start and imports
  // but downloads 5.6 MB more than the usual start (bench/results/2026-12-05-runtime-snapshot-session3.md):
  // a reader whose browser asks to save data gets the usual start. Dropped here, so the worker and
  // the byte count on the "Make it live" offer agree. (Network Information's `downlink` is no guide:
  // with no measurement yet, headless Chromium 156 reports 1.55 Mbps on localhost.)
  if (manifest.snapshot && navigator.connection && navigator.connection.saveData) delete manifest.snapshot;

  // ------------------------------------------------------------------ progress

  const progressListeners = new Set();
  const tasks = new Map(); // "python" | "model" → {what, loaded, total, done}
  let progressState = { what: "", loaded: 0, total: 0, done: true };

  kv.onProgress = function (cb) {
    progressListeners.add(cb);
    cb(progressState);
    return () => progressListeners.delete(cb);
  };

  /* Each runtime reports its own task; listeners see them combined (the labels
   * of the unfinished ones, their bytes added up), so Python and the model
   * can load at the same time without hiding each other's progress. */
  kv.reportProgress = function (task, update) {
    tasks.set(task, Object.assign({ what: "", loaded: 0, total: 0, done: false }, tasks.get(task), update));
    const open = [...tasks.values()].filter((t) => !t.done);
    progressState = {
      what: open.map((t) => t.what).filter(Boolean).join(" + "),
      loaded: open.reduce((n, t) => n + (t.total ? t.loaded : 0), 0),
      total: open.every((t) => t.total) ? open.reduce((n, t) => n + t.total, 0) : 0,
      done: open.length === 0,
    };
    progressListeners.forEach((cb) => cb(progressState));
  };

  /* Bytes a runtime downloads, for the "make it live" offer. */
  /* The bytes of site assets by their manifest paths (a widget's data-files). */
  kv.assetBytes = (paths) => paths.reduce((n, p) => n + ((manifest.files[p] || {}).size || 0), 0);
  kv.runtimeBytes = function (role) {
    const size = (p) => (manifest.files[p] || {}).size || 0;
    const dir = "vendor/pyodide/";
    // over http the worker loads the trimmed standard library (worker.js, sitebuild/stdlib_min.py)
    const stdlib = !manifest.offline && manifest.files[dir + "python_stdlib.min.zip"] ? "python_stdlib.min.zip" : "python_stdlib.zip";
    // with a snapshot (over http only): numpy's and kvlab's files come inside it
    const snap = manifest.snapshot && /^https?:$/.test(location.protocol);
    const paths =
      role === "python"
        ? ["pyodide.asm.wasm", stdlib, "pyodide-lock.json", "pyodide.asm.js", "pyodide.js"]
            .concat(snap ? [] : [manifest.numpyWheel])
            .map((f) => dir + f)
            .concat(snap ? [manifest.snapshot.file] : [manifest.kvlabZip])
        : manifest.model
          ? ["vendor/ort/ort-wasm-simd-threaded.wasm", "vendor/ort/ort.iife.js", manifest.model.onnx, manifest.model.tokenizer]
          : [];
    return paths.reduce((n, p) => n + size(p), 0);
  };

  // ------------------------------------------------------------------ transports

  function loadScript(url) {
    return new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = url;
      s.async = false;
      s.onload = () => resolve();
      s.onerror = () => {
        s.remove();
        reject(new Error(`could not load ${url.replace(kv.assets, "assets/")}; check your connection, then try again`));
      };
      document.head.appendChild(s);
    });
  }
  kv.loadScript = loadScript;

  /* In the offline (file://) build every binary the runtimes load also exists
   * as <file>.js, a classic script that calls kvlab.payloads.register(path,
   * base64): Chromium refuses fetch() from file:// but loads <script src>. */
  if (manifest.offline) {
    const waiting = new Map();
    kv.payloads = {
      register(path, b64) {
        const w = waiting.get(path);
        waiting.delete(path);
        if (w) w.forEach((resolve) => resolve(b64));
      },
      base64(path) {
        return new Promise((resolve, reject) => {
          if (!waiting.has(path)) waiting.set(path, []);
          waiting.get(path).push(resolve);
          loadScript(kv.assets + path + ".js").catch(reject);
        });
      },
    };
  }

  /* Plotly puts its layout rules (.main-svg position: absolute, ...) in a <style id="plotly.js-style-global">
     it adds to <head> once, when its bundle runs. Material's instant navigation replaces <head>'s content on
     every page change, so on the next page the rules were gone and every chart's overlay (axis titles,
     legend) fell below it, over the widget's text. The rules are kept here and put back when missing. */
  const PLOTLY_STYLE = "plotly.js-style-global";
  let plotlyRules = "";
  function keepPlotlyStyle() {
    const style = document.getElementById(PLOTLY_STYLE);
    if (style && style.sheet && !plotlyRules) plotlyRules = Array.from(style.sheet.cssRules, (r) => r.cssText).join("\n");
    if (!style && plotlyRules) {
      const back = document.createElement("style");
      back.id = PLOTLY_STYLE;
      back.textContent = plotlyRules;
      document.head.appendChild(back);
    }
  }

  let plotlyPromise = null;
  kv.plotly = function () {
    if (!plotlyPromise) {
      plotlyPromise = loadScript(kv.assets + "vendor/plotly/plotly-basic.min.js").then(() => window.Plotly);
      plotlyPromise.catch(() => (plotlyPromise = null));
    }
    return plotlyPromise.then((Plotly) => {
      keepPlotlyStyle();
      return Plotly;
    });
  };
})();
