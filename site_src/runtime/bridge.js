/* kvlab runtime, part 2 (page): the worker bridge and the public JS API.
 *
 *   kvlab.call(fn, kwargs)      kvlab.<fn>(**kwargs) in Python → the function's JSON
 *   kvlab.runPython(code)       → the JSON-able value of the last expression
 *   kvlab.generate({prompt, maxNewTokens, useCache, temperature, topK, seed, evict,
 *                   streamPrompt, onToken, onPromptToken, signal})
 *                               the tiny model generating (model.js); resolves to
 *                               {steps, promptLen, truncated, stopped, tokens, text, promptNll}
 *   kvlab.attention(prompt)     the model's attention weights: {ids, tokens, weights, mean}
 *   kvlab.encode(texts)         the model's tokenizer: [{ids, text, pieces}]
 *   kvlab.model()               loads the model (if needed) → {config}
 *   kvlab.python()              loads Python (if needed)
 *   kvlab.runtimeState(role)    "idle" | "loading" | "ready"
 *   kvlab.cancelLoading()       stops the runtimes still loading (their jobs reject with RuntimeCancelled)
 *
 * Each role runs in a Web Worker of its own (worker.js), started on first use
 * and kept for the visit: Python's computations never delay the model's timed
 * steps, and one runtime breaking leaves the other alone. Jobs queue in the
 * worker, one at a time; an AbortSignal cancels a queued job or stops a
 * running generation at its next step. If a worker dies (a fatal Pyodide
 * error, a stack overflow, out of memory), the job that killed it rejects with
 * a RuntimeCrashed error, the worker is dropped, and the next job starts a
 * fresh one. A worker can also die without a word (the browser kills it for
 * memory, or it is terminated): while a job is open the page pings it every
 * PING_MS, and a worker not heard from for `silentMs` (pong, progress, a
 * token or an answer) is taken for dead, the same way, so no job waits for
 * ever. (A synchronous Python call answers no ping until it returns: silentMs
 * is far above the longest call a widget makes.) Where no worker can start,
 * the runtime runs on the page (and says so in the console).
 */
(function () {
  "use strict";

  const kv = window.kvlab;
  const manifest = kv.manifest;

  /* The runtime broke (not the input): the next call starts it again. */
  class RuntimeCrashed extends Error {
    constructor(role, detail) {
      super(`the ${role === "python" ? "Python" : "model"} runtime stopped (${detail}); it restarts on your next change`);
      this.name = "RuntimeCrashed";
      this.role = role;
    }
  }
  kv.RuntimeCrashed = RuntimeCrashed;

  /* The reader cancelled the download (kvlab.cancelLoading): nothing broke. */
  class RuntimeCancelled extends Error {
    constructor(role) {
      super(`the ${role === "python" ? "Python" : "model"} download was cancelled`);
      this.name = "RuntimeCancelled";
      this.role = role;
    }
  }
  kv.RuntimeCancelled = RuntimeCancelled;

  function supportsWasm() {
    return typeof WebAssembly === "object" && typeof WebAssembly.instantiate === "function";
  }

  /* Start a worker for a role; resolves to a port-like object, or null when
   * workers are unavailable here (then the caller falls back to the page). */
  async function startWorker() {
    // offline builds: material's search shim replaces window.Worker on file:// (native-worker.js kept it)
    const Worker = window.kvlabNativeWorker || window.Worker;
    if (typeof Worker === "undefined") return null;
    let url = kv.assets + "kvlab/worker.js";
    if (manifest.offline) {
      // file://: a worker cannot load a file:// script; make it from its bytes
      const b64 = await kv.payloads.base64("kvlab/worker.js");
      url = URL.createObjectURL(new Blob([atob(b64)], { type: "text/javascript" }));
    }
    return new Promise((resolve) => {
      let worker;
      try {
        worker = new Worker(url);
      } catch (err) {
        console.warn("kvlab: cannot start a Web Worker here (" + err.message + ")");
        resolve(null);
        return;
      }
      const early = (ev) => {
        console.warn("kvlab: the Web Worker did not start (" + (ev.message || "blocked") + ")");
        worker.terminate();
        resolve(null);
      };
      worker.addEventListener("error", early, { once: true });
      worker.addEventListener("message", function hello(ev) {
        if (!ev.data || ev.data.type !== "hello") return;
        worker.removeEventListener("message", hello);
        worker.removeEventListener("error", early);
        resolve(worker);
      });
    });
  }

  /* The page as the worker (fallback): worker.js's serve() behind a MessageChannel. */
  async function startOnPage(role) {
    console.warn(`kvlab: no Web Worker available; running the ${role} runtime on the page's main thread (the page may pause while it works)`);
    if (!window.kvlabWorker) await kv.loadScript(kv.assets + "kvlab/worker.js");
    const channel = new MessageChannel();
    const one = async (path, onBytes) => {
      let out;
      if (manifest.offline) {
        out = window.kvlabWorker.decodeBase64(await kv.payloads.base64(path));
      } else {
        const res = await fetch(kv.assets + path);
        if (!res.ok) throw new window.kvlabWorker.JobError(`could not download ${path}: the server answered HTTP ${res.status}`);
        out = new Uint8Array(await res.arrayBuffer());
      }
      onBytes(out.length);
      return out;
    };
    const env = { role, assets: kv.assets, manifest };
    env.bytes = (task, what, paths) => window.kvlabWorker.fetchAll(env, task, what, paths, one);
    env.files = (task, what, paths) => window.kvlabWorker.fetchEach(env, task, what, paths, one);
    env.importScript = (path) => kv.loadScript(kv.assets + path);
    window.kvlabWorker.serve(channel.port2, env);
    channel.port1.terminate = () => channel.port1.close();
    return channel.port1;
  }

  const PING_MS = 1000;

  class Runtime {
    constructor(role) {
      this.role = role;
      this.port = null; // a Worker, or a MessagePort on the page
      this.starting = null;
      this.jobs = new Map(); // id → {resolve, reject, onEvent}
      this.nextId = 1;
      this.state = "idle";
      this.silentMs = 45_000; // the watchdog's patience (tests set it lower)
      this.heard = 0; // when the worker last said anything
      this.watchdog = null;
      this.epoch = 0; // a worker started before a cancel is not this runtime's
    }

    /* The reader cancelled while it loads: its worker goes (its downloads with it), every open
     * job rejects with RuntimeCancelled, and the next job starts afresh. */
    cancel() {
      if (this.state !== "loading") return false;
      this.epoch++;
      const err = new RuntimeCancelled(this.role);
      for (const [, job] of this.jobs) job.reject(err);
      this.jobs.clear();
      if (this.port) this.port.terminate();
      this.port = null;
      this.starting = null;
      this.state = "idle";
      kv.reportProgress(this.role, { what: "", done: true });
      return true;
    }

    /* While a job is open: ping the worker, and take it for dead when it has been silent too long. */
    watch() {
      if (this.watchdog) return;
      this.watchdog = setInterval(() => {
        if (!this.jobs.size || !this.port) {
          clearInterval(this.watchdog);
          this.watchdog = null;
        } else if (performance.now() - this.heard > this.silentMs) {
          this.crashed(`it did not answer for ${Math.round(this.silentMs / 1000)} s`);
        } else this.port.postMessage({ type: "ping" });
      }, PING_MS);
    }

    start() {
      if (!this.starting) {
        this.state = "loading";
        const epoch = this.epoch;
        this.starting = (async () => {
          if (!supportsWasm()) throw new Error("this browser has WebAssembly turned off or does not support it, and every live figure here needs it; the figures show the values computed when the page was built");
          const port = (await startWorker()) || (await startOnPage(this.role));
          if (epoch !== this.epoch) {
            port.terminate(); // cancelled while the worker started
            throw new RuntimeCancelled(this.role);
          }
          port.onmessage = (ev) => this.receive(ev.data);
          if (typeof port.terminate === "function" && !(port instanceof MessagePort)) port.onerror = (ev) => this.crashed(ev.message || "an error in the worker");
          port.postMessage({ type: "init", role: this.role, assets: kv.assets, manifest });
          this.port = port;
          return port;
        })();
        this.starting.catch(() => {
          if (epoch !== this.epoch) return; // a cancel has reset it already
          this.starting = null;
          this.state = "idle";
        });
      }
      return this.starting;
    }

    receive(msg) {
      if (!msg) return;
      this.heard = performance.now();
      if (msg.type === "pong") return;
      if (msg.type === "progress") {
        kv.reportProgress(this.role, msg.update);
        if (msg.update.done) this.state = "ready";
        return;
      }
      if (msg.type === "need") {
        kv.payloads.base64(msg.path).then(
          (b64) => this.port && this.port.postMessage({ type: "bytes", path: msg.path, b64 }),
          (err) => this.port && this.port.postMessage({ type: "bytes", path: msg.path, error: err.message })
        );
        return;
      }
      const job = this.jobs.get(msg.id);
      if (!job) return;
      if (msg.type === "event") {
        // the worker waits for this ack before its next step when asked to
        // (paced generation: the page shows each token before the next one)
        const done = Promise.resolve(job.onEvent && job.onEvent(msg.event)).catch((err) => console.warn("kvlab: onToken failed", err));
        if (msg.wantsAck) done.then(() => this.port === job.port && job.port.postMessage({ type: "ack", id: msg.id }));
        return;
      }
      this.jobs.delete(msg.id);
      if (msg.type === "done") job.resolve(msg.value);
      else if (msg.fatal) {
        job.reject(new RuntimeCrashed(this.role, msg.message));
        this.crashed(msg.message, job);
      } else job.reject(new Error(msg.message));
    }

    /* The worker is broken: fail every open job, drop it, start afresh next time. */
    crashed(detail, already) {
      console.warn(`kvlab: the ${this.role} runtime stopped: ${detail}`);
      kv.reportProgress(this.role, { what: "", done: true });
      for (const [, job] of this.jobs) if (job !== already) job.reject(new RuntimeCrashed(this.role, detail));
      this.jobs.clear();
      if (this.port) this.port.terminate();
      this.port = null;
      this.starting = null;
      this.state = "idle";
    }

    async run(op, args, { onEvent, signal } = {}) {
      if (signal && signal.aborted) return { cancelled: true };
      const port = await this.start();
      if (signal && signal.aborted) return { cancelled: true }; // aborted while the worker started
      if (this.port !== port) throw new RuntimeCancelled(this.role); // the reader cancelled meanwhile
      const id = this.nextId++;
      return new Promise((resolve, reject) => {
        if (!this.jobs.size) this.heard = performance.now(); // the watchdog counts from the first open job
        this.jobs.set(id, { resolve, reject, onEvent, port });
        this.watch();
        if (signal) signal.addEventListener("abort", () => this.port === port && port.postMessage({ type: "cancel", id }), { once: true });
        port.postMessage({ type: "job", id, op, args });
      });
    }
  }

  const python = new Runtime("python");
  const model = new Runtime("model");
  kv.runtimes = { python, model };
  kv.runtimeState = (role) => kv.runtimes[role].state;

  kv.python = () => python.run("load");

  /* Stop every runtime that is still downloading or starting (the widgets' Cancel button);
   * true when one was. */
  kv.cancelLoading = () => [python, model].map((r) => r.cancel()).some(Boolean);

  /* Checked before anything reaches Python: a pasted text is bounded in size,
   * and a text that can be JSON (it starts with "{" or "[") in nesting (a 10,000-level paste would overflow the wasm
   * stack inside json.loads, a crash rather than an error). A config.json is a
   * few levels deep and a few KB. */
  const LIMITS = { textBytes: 256 * 1024, jsonDepth: 64 };
  kv.inputLimits = LIMITS;

  function nestingDepth(text) {
    let depth = 0;
    let max = 0;
    let inString = false;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === "\\") i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === "{" || c === "[") max = Math.max(max, ++depth);
      else if (c === "}" || c === "]") depth--;
    }
    return max;
  }

  function checkInputs(kwargs) {
    for (const [name, value] of Object.entries(kwargs)) {
      if (typeof value === "number" && !Number.isFinite(value)) throw new Error(`${name}: ${value} is not a number this widget can use`);
      if (typeof value !== "string") continue;
      const bytes = new TextEncoder().encode(value).length;
      if (bytes > LIMITS.textBytes)
        throw new Error(`${name}: ${(bytes / 1024).toFixed(0)} KB is more than the ${LIMITS.textBytes / 1024} KB this widget reads`);
      // only a text that can be JSON (it starts with "{" or "[") is checked: a log's colour codes
      // ("\x1b[0;36m", from its first character on) open brackets that never close, and a log is no JSON
      if (!/^\s*[[{]/.test(value)) continue;
      const depth = nestingDepth(value);
      if (depth > LIMITS.jsonDepth)
        throw new Error(`${name}: nested ${depth.toLocaleString("en-US")} levels deep; a config.json has a few levels (at most ${LIMITS.jsonDepth} are read)`);
    }
  }
  kv.checkInputs = checkInputs;

  kv.call = async function (fn, kwargs) {
    checkInputs(kwargs || {});
    const reply = await python.run("call", { fn, kwargs: kwargs || {} });
    if (reply.error) throw new Error(reply.error);
    return reply.result;
  };

  kv.runPython = async function (code) {
    const reply = await python.run("runPython", { code: String(code) });
    if (reply.error) throw new Error(reply.error);
    return reply.result;
  };

  if (!manifest.model) return;

  let modelConfig = null;
  kv.model = async function () {
    if (!modelConfig) modelConfig = await model.run("config");
    return { config: modelConfig };
  };

  kv.generate = async function (opts) {
    const { onToken, onPromptToken, signal, ...args } = opts || {};
    // with onToken, each step waits until the page has handled the one before
    // (onToken may return a promise, e.g. the next animation frame); the
    // steps' own times do not include the wait
    const result = await model.run("generate", { ...args, paced: Boolean(onToken) }, {
      signal,
      onEvent: (ev) => {
        if (ev.kind === "token" && onToken) return onToken(ev.info);
        if (ev.kind === "promptToken" && onPromptToken) onPromptToken(ev.info);
      },
    });
    // cancelled before it started: an empty, stopped run
    return result.cancelled ? { steps: [], promptLen: 0, truncated: 0, stopped: true, tokens: [], text: "", promptNll: [] } : result;
  };

  kv.attention = (prompt, opts = {}) => model.run("attention", { prompt }, opts);
  kv.encode = (texts) => model.run("encode", { texts: Array.isArray(texts) ? texts : [texts] });
})();
