/* The kvlab runtime worker: Python (Pyodide + numpy + kvlab) or the tiny model
 * (onnxruntime-web), off the page's main thread. The page starts one worker per
 * role ("python", "model") on the reader's first intent, and keeps it for the
 * whole visit (instant navigation keeps the page's scripts alive).
 *
 * Protocol (postMessage, both ways plain objects):
 *   page → worker  {type: "init", role, assets, manifest}
 *                  {type: "job", id, op, args}      op: python "call" | "runPython";
 *                                                   model "load" | "generate" | "attention" | "encode"
 *                  {type: "cancel", id}             a queued job is dropped, a running one stops
 *                                                   at its next step
 *                  {type: "bytes", path, b64 | error}   answer to "need" (offline build)
 *                  {type: "ping"}                   the page's watchdog, while a job is open
 *   worker → page  {type: "hello"}                  the script runs (else the page falls back)
 *                  {type: "pong"}                   answer to "ping" (when no job holds the thread)
 *                  {type: "progress", task, update} bytes received, phases
 *                  {type: "event", id, event}       onToken / onPromptToken of a job
 *                  {type: "done", id, value} | {type: "failed", id, message, fatal}
 *                  {type: "need", path}             offline build: the page loads the
 *                                                   base64 payload script and answers "bytes"
 *
 * Jobs run one at a time, in order (onnxruntime-web cannot run one session
 * concurrently, and Python is single-threaded anyway). A job's failure is
 * `fatal` when the runtime itself broke (Pyodide's fatal error, a wasm stack
 * overflow, out of memory) or never finished loading (a download failed): the
 * page then drops this worker and starts a fresh one on the next use. Python
 * exceptions are not fatal: kvlab.bridge turns them into a one-line message.
 *
 * The same file runs on the page when no worker can start: serve(port, env)
 * then talks through a MessageChannel, and env loads scripts with <script>.
 */
(function (global) {
  "use strict";

  function serve(port, env) {
    const post = (msg, transfer) => port.postMessage(msg, transfer || []);
    const progress = (task, update) => post({ type: "progress", task, update });
    env.progress = progress;
    let runtime = null; // a promise of the loaded runtime
    let queue = Promise.resolve();
    const cancelled = new Set();
    const acks = new Map(); // job id → resolve(): the page handled the last token

    const ops = {
      python: {
        load: () => loadPython(env),
        call: async (py, { fn, kwargs }) => {
          await filesFor(py, fn);
          const bridge = py.pyimport("kvlab.bridge");
          try {
            return JSON.parse(bridge.call_json(fn, JSON.stringify(kwargs || {})));
          } finally {
            bridge.destroy();
          }
        },
        // while idle: import one more kvlab module (bridge.warm_one); false when all are
        warm: (py) => {
          const bridge = py.pyimport("kvlab.bridge");
          try {
            return bridge.warm_one();
          } finally {
            bridge.destroy();
          }
        },
        runPython: (py, { code }) => {
          const bridge = py.pyimport("kvlab.bridge");
          try {
            return JSON.parse(bridge.run_json(code));
          } finally {
            bridge.destroy();
          }
        },
      },
      model: {
        load: () => global.kvlabModel ? global.kvlabModel.load(env, env.manifest.model) : env.importScript("kvlab/model.js").then(() => global.kvlabModel.load(env, env.manifest.model)),
        generate: (model, opts, id) =>
          global.kvlabModel.generate(model, opts, {
            onToken: (info) => {
              if (!opts.paced) return post({ type: "event", id, event: { kind: "token", info } });
              return new Promise((resolve) => {
                acks.set(id, resolve);
                post({ type: "event", id, event: { kind: "token", info }, wantsAck: true });
              });
            },
            onPromptToken: (info) => post({ type: "event", id, event: { kind: "promptToken", info } }),
            cancelled: () => cancelled.has(id),
          }),
        attention: (model, { prompt }) => global.kvlabModel.attention(model, prompt),
        encode: (model, { texts }) => texts.map((t) => {
          const ids = model.tokenizer.encode(t);
          return { ids, text: model.tokenizer.decode(ids), pieces: ids.map((i) => model.tokenizer.tokenText(i)) };
        }),
        config: (model) => model.config,
      },
    }[env.role];

    /* Files a Python function reads that kvlab's zip leaves out (the tiny model's weights, for
     * the one widget that runs the numpy model): kvlab.bridge.files_json names them; they
     * download on the function's first call, with progress, and go where kvlab reads them. */
    const written = new Set();
    async function filesFor(py, fn) {
      const bridge = py.pyimport("kvlab.bridge");
      let what, need;
      try {
        const spec = JSON.parse(bridge.files_json(fn));
        what = spec.what;
        need = Object.entries(spec.files).filter(([asset]) => !written.has(asset));
      } finally {
        bridge.destroy();
      }
      if (!need.length) return;
      const got = await env.bytes("python-files", what, need.map(([asset]) => asset));
      for (const [asset, path] of need) {
        py.FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
        py.FS.writeFile(path, got[asset]);
        written.add(asset);
      }
      env.progress("python-files", { what, done: true });
    }

    function ensureLoaded() {
      if (!runtime) runtime = Promise.resolve().then(() => {
        assertWasmAllowed();
        // a runtime that did not finish loading (a download failed) is in no state to
        // retry: the job fails as fatal, the page drops this worker, and its next call
        // starts a fresh one, which downloads again (from the cache what had arrived)
        return ops.load().catch((err) => {
          throw Object.assign(err instanceof Error ? err : new Error(messageOf(err)), { loadFailed: true });
        });
      });
      return runtime;
    }

    async function runJob({ id, op, args }) {
      if (cancelled.has(id)) {
        cancelled.delete(id);
        return post({ type: "done", id, value: { cancelled: true } });
      }
      try {
        const rt = await ensureLoaded();
        const value = op === "load" ? true : await ops[op](rt, args || {}, id);
        post({ type: "done", id, value });
      } catch (err) {
        post({ type: "failed", id, message: messageOf(err), fatal: isFatal(err) });
      } finally {
        cancelled.delete(id);
      }
    }

    /* Idle work (Python: importing the kvlab modules no widget has asked for yet),
     * one short step at a time in the job queue, only while no job waits: a job
     * that arrives waits for at most one step. */
    let jobs = 0; // queued or running
    // in a worker only: on the page (no worker could start) each step would be a main-thread task
    let warmed = !ops.warm || !(typeof WorkerGlobalScope !== "undefined" && global instanceof WorkerGlobalScope);
    function warmLater() {
      if (warmed || jobs || !runtime) return;
      setTimeout(() => {
        if (warmed || jobs) return;
        queue = queue
          .then(async () => {
            if (!jobs) warmed = !(await ops.warm(await runtime));
          })
          .catch(() => (warmed = true))
          .then(warmLater);
      }, 50);
    }

    port.onmessage = (ev) => {
      const msg = ev.data || {};
      if (msg.type === "job") {
        jobs++;
        queue = queue.then(() => runJob(msg)).then(() => {
          jobs--;
          warmLater();
        });
      } else if (msg.type === "cancel") {
        cancelled.add(msg.id);
        const ack = acks.get(msg.id); // a paced run waiting for the page stops at once
        acks.delete(msg.id);
        if (ack) ack();
      } else if (msg.type === "ack") {
        const ack = acks.get(msg.id);
        acks.delete(msg.id);
        if (ack) ack();
      }
      else if (msg.type === "bytes" && env.onBytes) env.onBytes(msg);
      else if (msg.type === "ping") post({ type: "pong" }); // the page's watchdog: still here
    };
  }

  /* Errors a widget can show as they are: Python's one-line messages (from
   * kvlab.bridge) and our own. Anything from inside the runtimes is fatal. */
  class JobError extends Error {}

  function messageOf(err) {
    return err && err.message ? String(err.message) : String(err);
  }

  /* A host's Content-Security-Policy can forbid compiling WebAssembly (script-src
   * without 'wasm-unsafe-eval'): Pyodide then only logs a warning and never settles.
   * Compiling the smallest module first throws at once, before anything downloads. */
  function assertWasmAllowed() {
    try {
      new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
    } catch (err) {
      throw new JobError(`WebAssembly was refused here: ${messageOf(err)}`);
    }
  }

  function isFatal(err) {
    if (err && err.loadFailed) return true; // ensureLoaded: the runtime never finished loading
    if (err instanceof JobError) return false;
    // a RangeError (stack overflow, out of memory) or a WebAssembly trap leaves
    // the runtime in an unknown state; so does Pyodide's own fatal error
    return err instanceof RangeError || (typeof WebAssembly !== "undefined" && err instanceof WebAssembly.RuntimeError) || /fatal/i.test(messageOf(err));
  }

  // ------------------------------------------------------------------ Python

  /* Below this link speed the snapshot start is the slower one cold: it downloads 5.6 MB more than
   * the usual start and saves ~1-2 s of CPU. Measured under Chromium's network emulation, gzip host:
   * the break-even is 32 Mbps nominal, about 30 delivered (bench/results/2026-12-05-runtime-snapshot-session4.md). */
  const SNAPSHOT_MIN_MBPS = 30;

  /* The link's speed as the core files came over it (Resource Timing: the bytes as sent, compressed or
   * not, over the time from the first request to the last byte), in Mbps, counting only the files that
   * came whole over the network; 0 when they all came from the browser's cache (nothing to time: a
   * second visit); null when it cannot be read. */
  function linkMbps(urls) {
    const all = global.performance && performance.getEntriesByType ? performance.getEntriesByType("resource") : [];
    const entries = [...new Map(all.filter((e) => urls.includes(e.name)).map((e) => [e.name, e])).values()];
    if (entries.length !== urls.length) return null;
    const sent = entries.filter((e) => e.transferSize > 0 && e.transferSize >= 0.9 * e.encodedBodySize);
    const bytes = sent.reduce((n, e) => n + e.encodedBodySize, 0);
    if (bytes < 500000) return 0;
    const seconds = (Math.max(...sent.map((e) => e.responseEnd)) - Math.min(...sent.map((e) => e.startTime))) / 1000;
    return seconds > 0 ? (bytes * 8) / seconds / 1e6 : null;
  }

  /* Whether the browser's cache holds this file (stale or not: it is revalidated when fetched). */
  async function inCache(env, path) {
    try {
      const res = await fetch(env.assets + path, { cache: "only-if-cached", mode: "same-origin" });
      if (res.body) res.body.cancel().catch(() => {});
      return res.ok;
    } catch (err) {
      return false;
    }
  }

  async function loadPython(env) {
    const m = env.manifest;
    const dir = "vendor/pyodide/";
    const scripts = [dir + "pyodide.asm.js", dir + "pyodide.js"];
    // a memory snapshot of the started runtime (manifest.snapshot, sitebuild/snapshot.py), over
    // http only: Python restored with numpy and kvlab imported, the files later imports read
    // inside it (so neither numpy's wheel nor kvlab's zip downloads); any failure falls back
    let snap = m.snapshot && env.body ? [m.snapshot.file] : []; // none under Save-Data (loader.js)
    // over http, the standard library trimmed to what the widgets import (sitebuild/stdlib_min.py),
    // in the full one's place; an import it misses fetches the full one (fullStdlibOnMiss). A
    // snapshot names the one it was made with (the image holds the zip importer's directory of it)
    const min = dir + "python_stdlib.min.zip";
    const trimmed = env.response && m.files[min] && (!snap.length || m.snapshot.stdlib === min) ? min : null;
    const stdlib = trimmed || dir + "python_stdlib.zip";
    const core = [dir + "pyodide.asm.wasm", stdlib, dir + "pyodide-lock.json"];
    const packages = [dir + m.numpyWheel, m.kvlabZip];
    const label = `Python (Pyodide ${m.pyodideVersion}) with numpy and kvlab`;
    // Over http (env.response) Pyodide gets pyodide.asm.wasm as the browser's own
    // Response, not as bytes: WebAssembly.instantiateStreaming compiles it while it
    // arrives and Chromium caches it: a second visit started in 0.56–0.80× the time of the
    // from-memory path (bench/results/2026-12-05-runtime-routes.md). From file:// (fetch is
    // refused there) and on the page fallback it comes from memory as the rest.
    const streamed = env.response ? [dir + "pyodide.asm.wasm"] : [];
    // Python starts as soon as its scripts are in, while the rest downloads: Pyodide
    // asks for its wasm, standard library and lock file (served from these downloads
    // by withFetchShim), numpy after them; kvlab's zip last
    // With a snapshot to choose, the core (what both starts need) comes first and the link it came
    // over decides the rest (linkMbps); the snapshot is handed on as its body (a stream) and
    // gunzipped as it arrives (snapshot.js)
    const snapCached = snap.length ? inCache(env, snap[0]) : null; // a second visit's: no choice to make
    const planned = snap.length ? m.files[snap[0]].size : 0; // in the progress total until the choice is made
    const tally = { loaded: 0, total: planned };
    const files = env.files("python", label, core.concat(snap.length ? [] : packages, scripts), streamed, [], tally);
    // pyodide.asm.js first: pyodide.js then skips its own (blocked on file://) import
    for (const s of scripts) await env.importScript(s, await files[s]);
    if (snap.length) {
      await Promise.all(core.map((p) => files[p]));
      const mbps = linkMbps(core.map((p) => env.assets + p));
      if (!(await snapCached) && mbps !== null && mbps < SNAPSHOT_MIN_MBPS) {
        // a link too slow for the snapshot's extra bytes; or (0) the core came from the cache and the
        // snapshot did not: the first visit started the usual way, whose files are cached too
        console.info(mbps ? `kvlab: ${mbps.toPrecision(3)} Mbps measured; Python starts the usual way (smaller download)` : "kvlab: Python starts the usual way (its files are in the browser's cache, the snapshot is not)");
        snap = [];
      }
      tally.total -= planned;
      const rest = env.files("python", label, snap.length ? snap : packages, [], snap, tally);
      Object.assign(files, rest);
      Object.assign(files.bodies, rest.bodies);
    }
    let stage = "download"; // the progress line goes download → starting → numpy, never back
    // a failure of the snapshot's download is the snapshot's own (fromSnapshot reports it; the usual start follows)
    const arrived = (p) => (snap.includes(p) ? files[p].catch(() => new Promise(() => {})) : files[p]);
    const started = (big) => {
      const allIn = Promise.all(big.map(arrived));
      allIn.then(
        () => stage === "download" && ((stage = "starting"), env.progress("python", { what: "Starting Python…", loaded: 0, total: 0 })),
        () => {}
      );
      // a failed download fails the start, naming the file (Pyodide itself may never
      // settle when its wasm does not arrive): the race rejects with the first failure
      return allIn.then(() => new Promise(() => {}));
    };
    // what Pyodide asks for by URL, served from these downloads: its core, and on the usual start
    // numpy's wheel (loadPackage; from file:// Pyodide could not fetch it itself)
    const serve = (asked) => new Map(asked.map((p) => [new URL(env.assets + (p === stdlib ? dir + "python_stdlib.zip" : p)).href, files.responses[p] || files[p]]));
    const opts = { indexURL: env.assets + dir, stdout: () => {}, stderr: (s) => console.warn(s) };
    let py = null;
    if (snap.length) {
      try {
        py = await Promise.race([started(core.concat(snap)), fromSnapshot(env, files, snap[0], serve(core), opts)]);
      } catch (err) {
        if (err instanceof JobError && !err.snapshot) throw err; // a download of the usual path failed
        console.warn(`kvlab: Python's snapshot did not load (${messageOf(err)}); starting Python the usual way`);
        // the wasm's Response went to the failed start: a fresh one (from the browser's cache)
        for (const p of streamed) files.responses[p] = env.response(p, () => {}).response;
        stage = "download";
        Object.assign(files, env.files("python", label, packages));
      }
    }
    if (!py) {
      py = await Promise.race([started(core.concat(packages)), withFetchShim(serve(core.concat(packages[0])), () =>
        global.loadPyodide(opts).then(async (py) => {
          stage = "numpy";
          env.progress("python", { what: "Loading numpy…", loaded: 0, total: 0 });
          await py.loadPackage("numpy", { messageCallback: () => {}, errorCallback: (s) => console.warn(s) });
          return py;
        })
      )]);
      const site = py.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
      py.unpackArchive(await files[m.kvlabZip], "zip", { extractDir: site });
      py.pyimport("kvlab");
    }
    if (trimmed) fullStdlibOnMiss(py, env.assets + dir + "python_stdlib.zip");
    env.progress("python", { what: "Python ready", done: true });
    return py;
  }

  /* The trimmed standard library (sitebuild/stdlib_min.py) misses a module of the full one:
   * fetch the full one (once, synchronously: an import cannot wait; a worker may), write it where
   * the trimmed one was (a superset, same layout) and ask the path finders again. Only for names
   * the full library has (its list is in the trimmed zip): a module that is nowhere (an optional
   * import) downloads nothing. tests/browser/test_runtime_routes.py imports one it leaves out. */
  function fullStdlibOnMiss(py, url) {
    py.registerJsModule("_kvlab_stdlib", {
      fetch_full() {
        const req = new XMLHttpRequest();
        req.open("GET", url, false);
        req.responseType = "arraybuffer";
        req.send();
        if (req.status !== 200) throw new Error(`could not download ${url}: HTTP ${req.status}`);
        return new Uint8Array(req.response);
      },
    });
    py.runPython(`
import sys

class _FullStdlib:
    zip = "/lib/python312.zip"
    names = None

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        import importlib, importlib.machinery, zipimport
        if cls.names is None:
            try:
                cls.names = set(zipimport.zipimporter(cls.zip).get_data("kvlab-full-stdlib.txt").decode().split())
            except (OSError, zipimport.ZipImportError):  # not the trimmed zip: nothing to fetch
                cls.names = set()
        if name not in cls.names:
            return None
        import _kvlab_stdlib
        try:
            data = _kvlab_stdlib.fetch_full().to_bytes()
        except Exception as exc:
            raise ImportError(f"{name} is in Python's full standard library, which did not download: {exc}") from None
        with open(cls.zip, "wb") as f:
            f.write(data)
        sys.meta_path.remove(cls)
        zipimport._zip_directory_cache.clear()
        importlib.invalidate_caches()
        return importlib.machinery.PathFinder.find_spec(name, path, target)

sys.meta_path.append(_FullStdlib)
del _FullStdlib
`);
  }

  /* Python from the build's memory snapshot (snapshot.js): the files later imports read written
   * into the file system, numpy's side modules instantiated again, the image laid back, numpy
   * checked. Throws on any failure (err.snapshot: the snapshot's own; the caller then starts
   * Python the usual way; tests/browser/test_runtime_routes.py forces both). */
  async function fromSnapshot(env, files, file, served, opts) {
    const own = (err) => Object.assign(err instanceof Error ? err : new Error(messageOf(err)), { snapshot: true });
    let body; // the snapshot as it arrives: snapshot.js gunzips it on the way in
    try {
      body = await files.bodies[file];
      if (!global.kvlabSnapshot) await env.importScript("kvlab/snapshot.js");
    } catch (err) {
      if (body) body.cancel().catch(() => {}); // the download stops
      throw own(err);
    }
    return withFetchShim(served, () =>
      global.kvlabSnapshot.loadFromSnapshot(Object.assign({ snapshotGz: body }, opts)).then((py) => {
        py.pyimport("kvlab.bridge");
        return py;
      })
    ).catch((err) => {
      throw err instanceof JobError ? err : own(err);
    });
  }

  /* Pyodide fetches its own files: answer those we already hold from memory,
   * while it starts. Narrow on purpose: only these exact URLs, each served once. */
  async function withFetchShim(served, fn) {
    const realFetch = global.fetch;
    global.fetch = function (input, init) {
      const url = new URL(input instanceof Request ? input.url : String(input), global.location.href).href;
      const bytes = served.get(url); // a promise of the bytes (or of the browser's own Response), or the bytes
      if (!bytes) return realFetch.call(global, input, init);
      served.delete(url);
      const type = url.endsWith(".wasm") ? "application/wasm" : url.endsWith(".json") ? "application/json" : "application/octet-stream";
      return Promise.resolve(bytes).then((b) => (b instanceof Response ? b : new Response(b, { status: 200, headers: { "Content-Type": type } })));
    };
    try {
      return await fn();
    } finally {
      global.fetch = realFetch;
    }
  }

  // ------------------------------------------------------------------ inside a worker

  /* How a worker gets its bytes: over http it fetches them itself (streaming,
   * with progress); in the offline build (file://, where fetch is refused) it
   * asks the page, which holds them as base64 payload scripts. */
  function workerEnv(init, port) {
    const env = { role: init.role, assets: init.assets, manifest: init.manifest };
    const asked = new Map();
    env.onBytes = (msg) => {
      const waiter = asked.get(msg.path);
      asked.delete(msg.path);
      if (!waiter) return;
      if (msg.error) waiter.reject(new JobError(msg.error));
      else waiter.resolve(msg.b64);
    };
    const ask = (path) => new Promise((resolve, reject) => {
      asked.set(path, { resolve, reject });
      port.postMessage({ type: "need", path });
    });
    async function get(path) {
      let res;
      try {
        res = await fetch(init.assets + path);
      } catch (err) {
        throw new JobError(`could not download ${path} (${messageOf(err)}); check your connection and try again`);
      }
      if (!res.ok) throw new JobError(`could not download ${path}: the server answered HTTP ${res.status}`);
      return res;
    }
    async function read(path, res, onBytes) {
      const reader = res.body.getReader();
      const chunks = [];
      let received = 0;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          chunks.push(value);
          received += value.length;
          onBytes(value.length);
        }
      } catch (err) {
        throw new JobError(`could not download ${path} (${messageOf(err)}); check your connection and try again`);
      }
      const out = new Uint8Array(received);
      let offset = 0;
      for (const c of chunks) {
        out.set(c, offset);
        offset += c.length;
      }
      return out;
    }
    async function one(path, onBytes) {
      if (init.manifest.offline) {
        const out = decodeBase64(await ask(path));
        onBytes(out.length);
        return out;
      }
      return read(path, await get(path), onBytes);
    }
    if (!init.manifest.offline) {
      /* A file handed on as the browser's own Response (pyodide.asm.wasm: its compiled code is
       * cached only when it is compiled from the network's Response): {response, done}, where
       * `done` settles when the whole body has arrived (progress is counted on a clone). A
       * host that serves it without Content-Type application/wasm gets the bytes path instead
       * (instantiateStreaming would refuse it, and Pyodide then never settles). */
      env.response = (path, onBytes) => {
        let settle;
        const done = new Promise((resolve, reject) => (settle = { resolve, reject }));
        const response = get(path).then(
          (res) => {
            if (!/^application\/wasm\b/.test(res.headers.get("Content-Type") || "")) {
              const bytes = read(path, res, onBytes);
              bytes.then(() => settle.resolve(), settle.reject);
              return bytes.then((b) => new Response(b, { status: 200, headers: { "Content-Type": "application/wasm" } }));
            }
            read(path, res.clone(), onBytes).then(() => settle.resolve(), settle.reject);
            return res;
          },
          (err) => {
            settle.reject(err);
            throw err;
          }
        );
        response.catch(() => {});
        return { response, done };
      };
      /* A file handed on as its body, a stream of the bytes as they arrive (the snapshot, which
       * snapshot.js gunzips on the way in): {body, done}. Progress counts the bytes as they arrive;
       * the stream holds what its reader has not taken yet, so the download never waits for the
       * reader. `done` settles when all of it has arrived (a JobError when it did not); a reader
       * that cancels the stream stops the download. */
      env.body = (path, onBytes) => {
        let settle;
        const done = new Promise((resolve, reject) => (settle = { resolve, reject }));
        const body = get(path).then(
          (res) => {
            const counted = new TransformStream(
              { transform: (chunk, out) => (onBytes(chunk.length), out.enqueue(chunk)) },
              undefined,
              { highWaterMark: Infinity }
            );
            res.body.pipeTo(counted.writable).then(settle.resolve, (err) =>
              settle.reject(new JobError(`could not download ${path} (${messageOf(err)}); check your connection and try again`))
            );
            return counted.readable;
          },
          (err) => {
            settle.reject(err);
            throw err;
          }
        );
        body.catch(() => {});
        return { body, done };
      };
    }
    env.bytes = (task, what, paths) => fetchAll(env, task, what, paths, one);
    env.files = (task, what, paths, streamed, bodies, tally) => fetchEach(env, task, what, paths, one, streamed, bodies, tally);
    env.importScript = async (path, bytes) => {
      if (!init.manifest.offline && !bytes) return global.importScripts(init.assets + path);
      const data = bytes || (await one(path, () => {}));
      // a blob URL the worker makes itself loads from file:// too (docs/design.md)
      const url = URL.createObjectURL(new Blob([data], { type: "text/javascript" }));
      try {
        global.importScripts(url);
      } finally {
        URL.revokeObjectURL(url);
      }
    };
    return env;
  }

  /* Several files under one progress label, all downloading at once: {path:
   * Promise<Uint8Array>}, so a runtime starts on its first files while the rest
   * still arrive. (A failure is reported where a promise is awaited.) The paths in
   * `streamed` (where env.response exists) are not read into memory: out.responses[path]
   * is a promise of the browser's Response, and out[path] settles once it has all arrived;
   * those in `bodies` (where env.body exists) neither: out.bodies[path] is a promise of the
   * body as a stream (env.body), out[path] the same as for `streamed`. */
  function fetchEach(env, task, what, paths, one, streamed, bodies, tally = { loaded: 0, total: 0 }) {
    // `tally`: one progress count over several calls (a start that asks for its second half later)
    const sizes = env.manifest.files;
    tally.total += paths.reduce((n, p) => n + ((sizes[p] || {}).size || 0), 0);
    const total = tally.total;
    env.progress(task, { what, loaded: tally.loaded, total, done: false });
    const out = {};
    Object.defineProperty(out, "responses", { value: {} }); // not enumerable: fetchAll lists paths
    Object.defineProperty(out, "bodies", { value: {} });
    const stream = new Set(env.response ? streamed || [] : []);
    const piped = new Set(env.body ? bodies || [] : []);
    for (const p of paths) {
      const onBytes = (n) => {
        const loaded = (tally.loaded += n);
        env.progress(task, { what, loaded: Math.min(loaded, total || loaded), total: total || loaded, done: false });
      };
      if (stream.has(p)) {
        const { response, done } = env.response(p, onBytes);
        out.responses[p] = response;
        out[p] = done;
      } else if (piped.has(p)) {
        const { body, done } = env.body(p, onBytes);
        out.bodies[p] = body;
        out[p] = done;
      } else out[p] = one(p, onBytes);
      out[p].catch(() => {});
    }
    return out;
  }

  /* The same, once all have arrived: {path: Uint8Array}. */
  async function fetchAll(env, task, what, paths, one) {
    const each = fetchEach(env, task, what, paths, one);
    const got = await Promise.all(paths.map((p) => each[p]));
    return Object.fromEntries(paths.map((p, i) => [p, got[i]]));
  }

  function decodeBase64(b64) {
    const bin = atob(b64);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  global.kvlabWorker = { serve, fetchAll, fetchEach, decodeBase64, JobError };

  if (typeof WorkerGlobalScope !== "undefined" && global instanceof WorkerGlobalScope) {
    global.onmessage = (ev) => {
      if (!ev.data || ev.data.type !== "init") return;
      global.onmessage = null;
      serve(global, workerEnv(ev.data, global));
    };
    global.postMessage({ type: "hello" });
  }
})(self);
