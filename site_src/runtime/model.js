/* The tiny transformer on onnxruntime-web: tokenizer, generation, attention.
 *
 * Runs inside the runtime's model worker (worker.js), or on the page when no
 * worker can start; it never touches the DOM. It defines self.kvlabModel:
 *   Tokenizer                   byte-level BPE, a port of kvlab/tokenizer.py (tested against it)
 *   load(env, spec)             onnxruntime-web + the model + its tokenizer; warmed up (one cached
 *                               and one uncached step), so the first timed run pays no first-call cost
 *   generate(model, opts, hooks) prefill + decode with the past (useCache), or the whole
 *                               sequence again at every step (no cache); same seed → same tokens.
 *                               evict {sinks, window}: after each step keep only the first
 *                               `sinks` and the last `window` cached tokens (StreamingLLM; sinks 0
 *                               is a plain sliding window). Kept tokens keep their positions (RoPE).
 *                               streamPrompt: read the prompt one token at a time (evicting as
 *                               it goes) and report promptNll, the model's surprise per token.
 *                               kvFormat "fp32" | "fp16" | "int8" | "q8_0" | "q4_0": how the cache is
 *                               stored (kvQuant below); the result has kvFormat and cacheBytes (what
 *                               the cache holds at the end, in that format). forceTokens: feed these
 *                               instead of the chosen tokens (teacher forcing); returnLogits: the
 *                               result has each step's logits (Float32Array).
 *                               hooks: {onToken, onPromptToken, cancelled()}.
 *   attention(model, prompt)    per-layer, per-head attention weights of the prompt
 *   kvQuant                     the cache formats, byte for byte as kvlab's kv_quant (for tests)
 *
 * The ONNX I/O follows the Optimum / transformers.js decoder convention
 * (docs/design.md): input_ids, attention_mask, position_ids, past_key_values.{i}.key|value
 * → logits, present.{i}.key|value, attentions.{i}.
 */
(function (global) {
  "use strict";

  // ------------------------------------------------------------------ tokenizer

  // Python's `re` \s (str.isspace), spelled out: JS's \s differs in a few code points.
  const WS = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";

  class Tokenizer {
    constructor(json) {
      if (json.format !== "kvlab-bpe" || json.version !== 1) throw new Error("not a kvlab-bpe v1 tokenizer");
      this.pattern = buildSplitRegex(json.pattern);
      this.ranks = new Map(); // "a,b" → new id (its rank: lower merged first)
      this.vocab = [];
      for (let i = 0; i < 256; i++) this.vocab.push(Uint8Array.of(i));
      json.merges.forEach(([a, b], k) => {
        this.ranks.set(a + "," + b, 256 + k);
        const bytes = new Uint8Array(this.vocab[a].length + this.vocab[b].length);
        bytes.set(this.vocab[a]);
        bytes.set(this.vocab[b], this.vocab[a].length);
        this.vocab.push(bytes);
      });
      this.encoder = new TextEncoder();
      this.decoder = new TextDecoder("utf-8", { fatal: false });
      this.cache = new Map();
    }
    get vocabSize() {
      return this.vocab.length;
    }
    encodeChunk(chunk) {
      let ids = Array.from(this.encoder.encode(chunk));
      while (ids.length >= 2) {
        let best = null;
        let bestRank = Infinity;
        for (let i = 0; i < ids.length - 1; i++) {
          const r = this.ranks.get(ids[i] + "," + ids[i + 1]);
          if (r !== undefined && r < bestRank) {
            bestRank = r;
            best = [ids[i], ids[i + 1]];
          }
        }
        if (!best) break;
        const out = [];
        for (let i = 0; i < ids.length; i++) {
          if (i < ids.length - 1 && ids[i] === best[0] && ids[i + 1] === best[1]) {
            out.push(bestRank);
            i++;
          } else out.push(ids[i]);
        }
        ids = out;
      }
      return ids;
    }
    encode(text) {
      const out = [];
      for (const m of text.matchAll(this.pattern)) {
        let ids = this.cache.get(m[0]);
        if (!ids) {
          ids = this.encodeChunk(m[0]);
          if (this.cache.size < 100000) this.cache.set(m[0], ids);
        }
        out.push(...ids);
      }
      return out;
    }
    decode(ids) {
      let n = 0;
      for (const i of ids) n += this.vocab[i].length;
      const bytes = new Uint8Array(n);
      let o = 0;
      for (const i of ids) {
        bytes.set(this.vocab[i], o);
        o += this.vocab[i].length;
      }
      return this.decoder.decode(bytes);
    }
    tokenText(id) {
      return this.decode([id]);
    }
  }

  /* The Python split pattern, with \s and \S replaced by explicit classes
   * (inside a character class, \s becomes the bare ranges). */
  function buildSplitRegex(pattern) {
    let out = "";
    let inClass = false;
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern[i];
      if (c === "\\" && i + 1 < pattern.length) {
        const n = pattern[i + 1];
        i++;
        if (n === "s") out += inClass ? WS : `[${WS}]`;
        else if (n === "S") {
          if (inClass) throw new Error("\\S inside a class is not supported");
          out += `[^${WS}]`;
        } else out += "\\" + n;
        continue;
      }
      if (c === "[" && !inClass) inClass = true;
      else if (c === "]" && inClass) inClass = false;
      out += c;
    }
    return new RegExp(out, "gu");
  }

  // ------------------------------------------------------------------ cache formats

  /* How a cached vector (head_dim values: one token, one head, K or V, one layer) is
   * stored: a port, byte for byte, of kvlab's kv_quant (pycode/kvlab/core/kv_quant.py,
   * which documents the layouts; q8_0 and q4_0 are ggml's quantize_row_*_ref). Tests
   * hold the two equal. All arithmetic is float32: Math.fround after each operation
   * (a double result of one +, *, / on floats, rounded once, is the float32 result). */
  const KV_FORMATS = ["fp32", "fp16", "int8", "q8_0", "q4_0"];
  const QK = 32; // ggml's block: 32 values
  const f32buf = new Float32Array(1);
  const u32buf = new Uint32Array(f32buf.buffer);

  /* float32 → IEEE half bits, round to nearest even (subnormals, overflow to inf). */
  function f16Bits(x) {
    f32buf[0] = x;
    const w = u32buf[0];
    const sign = (w >>> 16) & 0x8000;
    const exp = (w >>> 23) & 0xff;
    const mant = w & 0x7fffff;
    if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
    const e = exp - 127 + 15;
    if (e >= 31) return sign | 0x7c00;
    if (e <= 0) {
      if (e < -10) return sign; // below half the smallest subnormal
      const m = mant | 0x800000;
      const shift = 14 - e;
      let r = m >>> shift;
      const rem = m & ((1 << shift) - 1);
      const half = 1 << (shift - 1);
      if (rem > half || (rem === half && r & 1)) r++;
      return sign | r;
    }
    let r = (e << 10) | (mant >>> 13);
    const rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem === 0x1000 && r & 1)) r++; // a carry may reach inf: right
    return sign | r;
  }

  function f16Value(h) {
    const s = h & 0x8000 ? -1 : 1;
    const e = (h >> 10) & 0x1f;
    const m = h & 0x3ff;
    if (e === 0) return s * m * 2 ** -24;
    if (e === 31) return m ? NaN : s * Infinity;
    return s * (1024 + m) * 2 ** (e - 25);
  }

  const roundAway = (v) => Math.sign(v) * Math.floor(Math.abs(v) + 0.5) + 0; // C roundf; +0 turns -0 into 0
  const inverse = (d) => (d ? Math.fround(1 / d) : 0);

  function bytesPerVector(format, D) {
    if (!KV_FORMATS.includes(format)) throw new Error(`kvFormat ${JSON.stringify(format)} unknown; choose one of ${KV_FORMATS.join(", ")}`);
    if ((format === "q8_0" || format === "q4_0") && D % QK) throw new Error(`${format} needs head_dim divisible by ${QK}`);
    return { fp32: 4 * D, fp16: 2 * D, int8: D + 4, q8_0: (D / QK) * 34, q4_0: (D / QK) * 18 }[format];
  }

  /* D values of x from offset o → bytesPerVector(format, D) bytes of out from offset p. */
  function quantizeVector(format, x, o, D, out, p) {
    const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
    if (format === "fp32") {
      for (let j = 0; j < D; j++) view.setFloat32(p + 4 * j, x[o + j], true);
    } else if (format === "fp16") {
      for (let j = 0; j < D; j++) view.setUint16(p + 2 * j, f16Bits(x[o + j]), true);
    } else if (format === "int8") {
      let amax = 0;
      for (let j = 0; j < D; j++) amax = Math.max(amax, Math.abs(x[o + j]));
      const s = Math.fround(amax / 127);
      view.setFloat32(p, s, true);
      for (let j = 0; j < D; j++) out[p + 4 + j] = s ? Math.max(-127, Math.min(127, roundAway(Math.fround(x[o + j] / s)))) & 0xff : 0;
    } else {
      for (let b = 0; b < D / QK; b++, o += QK) {
        if (format === "q8_0") { // quantize_row_q8_0_ref
          let amax = 0;
          for (let j = 0; j < QK; j++) amax = Math.max(amax, Math.abs(x[o + j]));
          const d = Math.fround(amax / 127);
          const id = inverse(d);
          view.setUint16(p, f16Bits(d), true);
          for (let j = 0; j < QK; j++) out[p + 2 + j] = roundAway(Math.fround(x[o + j] * id)) & 0xff;
          p += 34;
        } else { // q4_0: quantize_row_q4_0_ref
          let amax = 0;
          let max = 0;
          for (let j = 0; j < QK; j++) {
            const v = x[o + j];
            if (amax < Math.abs(v)) {
              amax = Math.abs(v);
              max = v;
            }
          }
          const d = Math.fround(max / -8);
          const id = inverse(d);
          view.setUint16(p, f16Bits(d), true);
          for (let j = 0; j < QK / 2; j++) {
            const x0 = Math.fround(x[o + j] * id);
            const x1 = Math.fround(x[o + QK / 2 + j] * id);
            const xi0 = Math.min(15, Math.trunc(Math.fround(x0 + 8.5)));
            const xi1 = Math.min(15, Math.trunc(Math.fround(x1 + 8.5)));
            out[p + 2 + j] = xi0 | (xi1 << 4);
          }
          p += 18;
        }
      }
    }
  }

  /* bytes of `src` from offset p → D float32 values into y from offset o. */
  function dequantizeVector(format, src, p, D, y, o) {
    const view = new DataView(src.buffer, src.byteOffset, src.byteLength);
    if (format === "fp32") {
      for (let j = 0; j < D; j++) y[o + j] = view.getFloat32(p + 4 * j, true);
    } else if (format === "fp16") {
      for (let j = 0; j < D; j++) y[o + j] = f16Value(view.getUint16(p + 2 * j, true));
    } else if (format === "int8") {
      const s = view.getFloat32(p, true);
      for (let j = 0; j < D; j++) y[o + j] = Math.fround(view.getInt8(p + 4 + j) * s);
    } else {
      for (let b = 0; b < D / QK; b++, o += QK) {
        const d = f16Value(view.getUint16(p, true));
        if (format === "q8_0") {
          for (let j = 0; j < QK; j++) y[o + j] = view.getInt8(p + 2 + j) * d;
          p += 34;
        } else {
          for (let j = 0; j < QK / 2; j++) {
            const q = src[p + 2 + j];
            y[o + j] = ((q & 0x0f) - 8) * d;
            y[o + QK / 2 + j] = ((q >> 4) - 8) * d;
          }
          p += 18;
        }
      }
    }
  }

  /* Whole arrays, for tests: (n·D floats) → (n·bytesPerVector bytes) and back. */
  function quantize(format, values, D) {
    const x = Float32Array.from(values);
    const bpv = bytesPerVector(format, D);
    const out = new Uint8Array((x.length / D) * bpv);
    for (let v = 0; v < x.length / D; v++) quantizeVector(format, x, v * D, D, out, v * bpv);
    return out;
  }
  function dequantize(format, bytes, D) {
    const src = Uint8Array.from(bytes);
    const bpv = bytesPerVector(format, D);
    const y = new Float32Array((src.length / bpv) * D);
    for (let v = 0; v < src.length / bpv; v++) dequantizeVector(format, src, v * bpv, D, y, v * D);
    return y;
  }

  /* The cache as stored: per layer, K and V, one byte row per slot (H vectors of
   * bytesPerVector each). Written from a step's present outputs (only the new slots),
   * read back as the next step's past tensors [1, H, L, D]. */
  class StoredCache {
    constructor(format, nLayer, H, D) {
      Object.assign(this, { format, nLayer, H, D, bpv: bytesPerVector(format, D) });
      this.rows = Array.from({ length: nLayer }, () => ({ key: [], value: [] }));
    }
    get length() {
      return this.rows[0].key.length;
    }
    /* present[i].{key,value} [1, H, L, D]: quantize slots from..L-1 and keep their bytes. */
    write(present, from) {
      const { H, D, bpv, format } = this;
      present.forEach((p, i) => {
        for (const kind of ["key", "value"]) {
          const t = p[kind];
          const L = t.dims[2];
          for (let s = from; s < L; s++) {
            const row = new Uint8Array(H * bpv);
            for (let h = 0; h < H; h++) quantizeVector(format, t.data, (h * L + s) * D, D, row, h * bpv);
            this.rows[i][kind].push(row);
          }
        }
      });
    }
    keep(slots) {
      for (const layer of this.rows) for (const kind of ["key", "value"]) layer[kind] = slots.map((s) => layer[kind][s]);
    }
    past(ort) {
      const { H, D, bpv, format } = this;
      const L = this.length;
      return this.rows.map((layer) => {
        const tensor = (rows) => {
          const y = new Float32Array(H * L * D);
          rows.forEach((row, s) => {
            for (let h = 0; h < H; h++) dequantizeVector(format, row, h * bpv, D, y, (h * L + s) * D);
          });
          return new ort.Tensor("float32", y, [1, H, L, D]);
        };
        return { key: tensor(layer.key), value: tensor(layer.value) };
      });
    }
    get bytes() {
      return this.length * this.nLayer * 2 * this.H * this.bpv;
    }
  }

  // ------------------------------------------------------------------ model

  /* env: {bytes(task, label, paths) → {path: Uint8Array}, importScript(path), progress(task, update)} */
  async function load(env, spec) {
    const wasm = "vendor/ort/ort-wasm-simd-threaded.wasm";
    const label = `the tiny model (${(spec.params / 1e6).toFixed(2)}M parameters) and onnxruntime-web`;
    const files = await env.bytes("model", label, [wasm, spec.onnx, spec.tokenizer, "vendor/ort/ort.iife.js"]);
    await env.importScript("vendor/ort/ort.iife.js", files["vendor/ort/ort.iife.js"]);
    const ort = global.ort;
    ort.env.wasm.numThreads = 1; // GitHub Pages is not cross-origin isolated: no threads
    ort.env.wasm.proxy = false; // we are the worker already
    ort.env.wasm.wasmBinary = files[wasm];
    ort.env.logLevel = "error";
    env.progress("model", { what: "Starting the model…", loaded: 0, total: 0 });
    const session = await ort.InferenceSession.create(files[spec.onnx], { executionProviders: ["wasm"], graphOptimizationLevel: "all" });
    const tokenizer = new Tokenizer(JSON.parse(new TextDecoder().decode(files[spec.tokenizer])));
    const model = { ort, session, tokenizer, config: spec.config };
    // Warm-up: the first run of each shape pays allocation and kernel set-up;
    // do it now, so that no timed run shown to a reader includes it.
    env.progress("model", { what: "Warming up the model…", loaded: 0, total: 0 });
    await generate(model, { prompt: "The cat sat on the mat.", maxNewTokens: 3, useCache: true });
    await generate(model, { prompt: "The cat sat on the mat.", maxNewTokens: 2, useCache: false });
    env.progress("model", { what: "Model ready", done: true });
    return model;
  }

  // ------------------------------------------------------------------ generation

  /* A small seeded generator (mulberry32): the same seed gives the same
   * samples in both modes, so cached and uncached runs can be compared. */
  function rng(seed) {
    let a = seed >>> 0;
    return function () {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  /* Probabilities of the top-k tokens (softmax at the temperature), highest first:
   * a port of kvlab.core.sampling.top_k_probs (parity: tests/browser/test_model_js_parity.py). */
  function topK(logits, k, temperature) {
    const idx = Array.from(logits.keys()).sort((a, b) => logits[b] - logits[a] || a - b).slice(0, Math.max(1, k));
    const t = temperature > 0 ? temperature : 1;
    const max = logits[idx[0]];
    // probabilities over the whole vocabulary, for display
    let z = 0;
    for (let i = 0; i < logits.length; i++) z += Math.exp((logits[i] - max) / t);
    return idx.map((i) => ({ token: i, p: Math.exp((logits[i] - max) / t) / z }));
  }

  function sample(candidates, temperature, random) {
    if (!(temperature > 0)) return candidates[0].token; // greedy
    const total = candidates.reduce((s, c) => s + c.p, 0);
    let r = random() * total;
    for (const c of candidates) {
      r -= c.p;
      if (r <= 0) return c.token;
    }
    return candidates[candidates.length - 1].token;
  }

  const int64 = (ort, values, dims) => new ort.Tensor("int64", BigInt64Array.from(values, (v) => BigInt(v)), dims);

  /* onnxruntime-web does not support concurrent run() calls on one session:
   * the worker runs one job at a time (its queue), and this guard catches a
   * mistake there. ms is the run's own time. */
  let inRun = false;
  async function timedRun(session, feeds, fetches) {
    if (inRun) throw new Error("internal: two model runs at once");
    inRun = true;
    try {
      const t0 = performance.now();
      const out = await session.run(feeds, fetches);
      return { out, ms: performance.now() - t0 };
    } finally {
      inRun = false;
    }
  }

  /* One forward pass. past: array of {key, value} tensors (or null = empty). */
  async function forward(model, ids, startPos, past, wantAttention, pastLen) {
    const { ort, session, config } = model;
    const T = ids.length;
    const P = startPos; // position of the first new token
    const slots = pastLen === undefined ? P : pastLen; // cache entries (fewer than P after eviction)
    const feeds = {
      input_ids: int64(ort, ids, [1, T]),
      attention_mask: int64(ort, new Array(slots + T).fill(1), [1, slots + T]),
      position_ids: int64(ort, ids.map((_, i) => P + i), [1, T]),
    };
    const H = config.n_kv_head || config.n_head;
    const D = config.n_embd / config.n_head;
    for (let i = 0; i < config.n_layer; i++) {
      feeds[`past_key_values.${i}.key`] = past ? past[i].key : new ort.Tensor("float32", new Float32Array(0), [1, H, 0, D]);
      feeds[`past_key_values.${i}.value`] = past ? past[i].value : new ort.Tensor("float32", new Float32Array(0), [1, H, 0, D]);
    }
    const fetches = ["logits"];
    for (let i = 0; i < config.n_layer; i++) fetches.push(`present.${i}.key`, `present.${i}.value`);
    if (wantAttention) for (let i = 0; i < config.n_layer; i++) fetches.push(`attentions.${i}`);
    const { out, ms } = await timedRun(session, feeds, fetches);
    Object.values(feeds).forEach((t) => t.dispose && t.dispose());
    const V = config.vocab_size;
    const logits = out.logits.data.slice((T - 1) * V, T * V);
    out.logits.dispose();
    const present = [];
    for (let i = 0; i < config.n_layer; i++) present.push({ key: out[`present.${i}.key`], value: out[`present.${i}.value`] });
    const attentions = wantAttention ? Array.from({ length: config.n_layer }, (_, i) => out[`attentions.${i}`]) : null;
    return { logits, present, attentions, ms };
  }

  function disposePast(past) {
    if (past) past.forEach((p) => (p.key.dispose(), p.value.dispose()));
  }

  /* Keep only the cache slots in `keep` (indices along the sequence axis). */
  function selectSlots(ort, past, keep) {
    return past.map(({ key, value }) => {
      const pick = (t) => {
        const [B, H, L, D] = t.dims;
        const out = new Float32Array(B * H * keep.length * D);
        for (let h = 0; h < B * H; h++)
          keep.forEach((slot, j) => out.set(t.data.subarray((h * L + slot) * D, (h * L + slot + 1) * D), (h * keep.length + j) * D));
        return new ort.Tensor("float32", out, [B, H, keep.length, D]);
      };
      return { key: pick(key), value: pick(value) };
    });
  }

  /* Give the event loop a turn between steps (a cancel message, progress)
   * without the 4 ms clamp of nested setTimeout. */
  const channel = new MessageChannel();
  const waiting = [];
  channel.port1.onmessage = () => waiting.shift()();
  const yieldTurn = () => new Promise((resolve) => {
    waiting.push(resolve);
    channel.port2.postMessage(0);
  });

  /* -log p(target) under the logits (natural log): a port of kvlab.core.sampling.token_nll. */
  function nll(logits, target) {
    let max = -Infinity;
    for (const x of logits) if (x > max) max = x;
    let z = 0;
    for (const x of logits) z += Math.exp(x - max);
    return -(logits[target] - max - Math.log(z));
  }

  async function generate(model, { prompt, maxNewTokens = 32, useCache = true, temperature = 0, topK: k = 5, seed = 0, evict, streamPrompt = false, kvFormat = "fp32", forceTokens, returnLogits = false }, hooks = {}) {
    const { onToken, onPromptToken } = hooks;
    const signal = { get aborted() { return Boolean(hooks.cancelled && hooks.cancelled()); } };
    const { tokenizer, config } = model;
    if (typeof prompt !== "string" || !prompt.trim()) throw new Error("Type a prompt first: the model continues your text.");
    const maxNew = Math.max(1, Math.min(maxNewTokens | 0, config.block_size - 1));
    let ids = tokenizer.encode(prompt);
    let truncated = 0;
    const room = config.block_size - maxNew;
    if (ids.length > room) {
      truncated = ids.length - room;
      ids = ids.slice(truncated); // keep the end: it is what the model continues
    }
    const random = rng(seed);
    const promptLen = ids.length;
    const seq = ids.slice();
    const steps = [];
    const logits = returnLogits ? [] : null;
    let past = null;
    let cached = []; // absolute positions held in the cache, in slot order
    // kvFormat: how the cache is stored. fp32 keeps onnxruntime's present tensors as
    // they are; any other format quantizes each new entry when it is written and
    // dequantizes the whole cache when the next step's past tensors are built.
    const H = config.n_kv_head || config.n_head;
    const D = config.n_embd / config.n_head;
    bytesPerVector(kvFormat, D); // an unknown format is refused here
    if (kvFormat !== "fp32" && !useCache) throw new Error(`kvFormat ${kvFormat} needs the cache (useCache: true)`);
    const stored = kvFormat === "fp32" ? null : new StoredCache(kvFormat, config.n_layer, H, D);
    const keepPresent = (present) => { // after a cached forward pass: the cache becomes `present`
      if (stored) {
        stored.write(present, cached.length);
        disposePast(present);
        disposePast(past);
        past = stored.past(model.ort);
      } else {
        disposePast(past);
        past = present;
      }
    };
    const cacheBytes = () => (stored ? stored.bytes : useCache ? cached.length * config.n_layer * 2 * H * D * 4 : 0);
    const sinks = evict ? Math.max(0, evict.sinks | 0) : 0;
    const window = evict ? Math.max(1, evict.window | 0) : Infinity;
    const evictIfFull = () => {
      if (cached.length <= sinks + window) return 0;
      const keep = cached.map((_, i) => i).filter((i) => i < sinks || i >= cached.length - window);
      let slim;
      if (stored) {
        stored.keep(keep);
        slim = stored.past(model.ort);
      } else slim = selectSlots(model.ort, past, keep);
      disposePast(past);
      past = slim;
      const evicted = cached.length - keep.length;
      cached = keep.map((i) => cached[i]);
      return evicted;
    };
    // streamPrompt: read the prompt one token at a time, evicting as it goes, as a
    // streaming model (StreamingLLM) would; records how surprised the model was by
    // each prompt token: promptNll[i] = -ln p(token i+1 | what the cache still holds)
    let streamed = null;
    const promptNll = [];
    if (useCache && streamPrompt) {
      let ms = 0;
      for (let i = 0; i < promptLen; i++) {
        if (signal && signal.aborted) { disposePast(past); return { steps, promptLen, truncated, promptText: tokenizer.decode(ids), stopped: true, promptNll, tokens: [], text: "", kvFormat, cacheBytes: cacheBytes() }; }
        const res = await forward(model, [seq[i]], i, past, false, cached.length);
        ms += res.ms;
        keepPresent(res.present);
        cached.push(i);
        evictIfFull();
        if (i < promptLen - 1) promptNll.push(nll(res.logits, seq[i + 1]));
        else streamed = { logits: res.logits, ms };
        if (onPromptToken) onPromptToken({ position: i, cached: cached.length, nll: promptNll[promptNll.length - 1] });
        if (i % 16 === 15) await yieldTurn();
      }
    }
    try {
      for (let step = 0; step < maxNew; step++) {
        if (signal && signal.aborted) return { steps, promptLen, truncated, promptText: tokenizer.decode(ids), stopped: true, tokens: seq.slice(promptLen), text: tokenizer.decode(seq.slice(promptLen)), kvFormat, cacheBytes: cacheBytes(), ...(logits && { logits }) };
        let res;
        const cacheLenBefore = useCache ? (step === 0 && streamed ? 0 : cached.length) : 0;
        let evicted = 0;
        if (step === 0 && streamed) {
          res = streamed; // the prompt was already read, token by token
        } else if (useCache) {
          const start = step === 0 ? 0 : seq.length - 1;
          res = await forward(model, step === 0 ? seq : [seq[seq.length - 1]], start, past, false, cached.length);
          keepPresent(res.present);
          for (let pos = start; pos < seq.length; pos++) cached.push(pos);
          evicted = evictIfFull();
        } else {
          res = await forward(model, seq, 0, null, false);
          disposePast(res.present);
        }
        const candidates = topK(res.logits, k, temperature);
        const token = sample(candidates, temperature, random);
        // forceTokens: feed these instead of the chosen ones (teacher forcing: every
        // kvFormat then sees the same text, so their logits compare step by step)
        seq.push(forceTokens && step < forceTokens.length ? forceTokens[step] | 0 : token);
        if (logits) logits.push(res.logits);
        const info = {
          step,
          phase: step === 0 ? "prefill" : "decode",
          token,
          text: tokenizer.tokenText(token),
          top: candidates.map((c) => ({ token: c.token, text: tokenizer.tokenText(c.token), p: c.p })),
          tokensIn: useCache ? (step === 0 ? promptLen : 1) : seq.length - 1,
          cacheLenBefore,
          cacheLenAfter: useCache ? cached.length : 0,
          evicted,
          cachedPositions: useCache && evict ? cached.slice() : null,
          position: seq.length - 1,
          ms: res.ms,
        };
        steps.push(info);
        if (onToken) await onToken(info); // a paced run waits for the page here
        await yieldTurn();
      }
      return { steps, promptLen, truncated, promptText: tokenizer.decode(ids), stopped: false, promptNll, tokens: seq.slice(promptLen), text: tokenizer.decode(seq.slice(promptLen)), kvFormat, cacheBytes: cacheBytes(), ...(logits && { logits }) };
    } finally {
      disposePast(past);
    }
  }

  /* Attention weights of a prompt: weights[layer][head][query][key], mean[layer][query][key]. */
  async function attention(model, prompt) {
    if (typeof prompt !== "string" || !prompt.trim()) throw new Error("Type a prompt first.");
    const ids = model.tokenizer.encode(prompt).slice(0, model.config.block_size);
    const res = await forward(model, ids, 0, null, true);
    disposePast(res.present);
    const T = ids.length;
    const weights = res.attentions.map((t) => {
      const [, H] = t.dims;
      const heads = [];
      for (let h = 0; h < H; h++) {
        const rows = [];
        for (let q = 0; q < T; q++) rows.push(Array.from(t.data.subarray((h * T + q) * T, (h * T + q + 1) * T)));
        heads.push(rows);
      }
      t.dispose();
      return heads;
    });
    // the average over heads, per layer: a port of kvlab.model_attention_figure's mean_over_heads (parity:
    // tests/browser/test_model_widgets.py::test_browser_attention_equals_the_numpy_reference)
    const mean = weights.map((heads) => heads[0].map((row, q) => row.map((_, k) => heads.reduce((s, h) => s + h[q][k], 0) / heads.length)));
    return { ids, tokens: ids.map((i) => model.tokenizer.tokenText(i)), weights, mean };
  }

  global.kvlabModel = { Tokenizer, load, generate, attention, sampling: { topK, nll }, kvQuant: { FORMATS: KV_FORMATS, bytesPerVector, quantize, dequantize, f16Bits } };
})(self);
