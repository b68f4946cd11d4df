/* Python from a memory snapshot (sitebuild/snapshot.mjs): Pyodide 0.27's
 * _loadSnapshot, plus what that API leaves out for numpy. worker.js loads it (as
 * assets/kvlab/snapshot.js) only over http and when the manifest names a snapshot: every http
 * build makes one (sitebuild/snapshot.py), the offline build none
 * (bench/results/2026-12-05-runtime-snapshot-session2.md, and -session3.md for the wiring).
 *
 * Pyodide lays the snapshot's memory image back and reconnects Python's JS
 * references; numpy's extension modules (wasm side modules) are not in it. So,
 * between the module's creation and the image being laid back (a wrapper around
 * the global _createPyodideModule), this instantiates each side module again at
 * the memory and table bases its `struct dso` handle recorded: their data
 * segments and constructors then write into memory that the image overwrites
 * right after. The file system is not in the image either: the files a later import
 * still reads (numpy's side modules, the modules not imported yet) come in the same
 * file and are written into it here (in JS: no Python may run before the image is
 * back). Any failure throws; the caller falls back to a plain start.
 */
(function (global) {
  "use strict";

  /* "KVSNAP02" | u32 n | header JSON (n bytes) | pad to 8 | image (header.image bytes: the
   * memory up to its trailing zeros) | the files (header.files: [path, size], in order).
   *
   * `source`: the gzipped file, as bytes or as a stream of them as they arrive (worker.js hands on
   * the download's body: gunzipped on the way in, not after). Read as it is gunzipped: once the
   * header is in, `snapshot` (the memory, zeros past the image) and the files' buffer exist and
   * fill as the rest arrives, so Pyodide makes its module (which needs only the memory's size)
   * while the image is still arriving; `rest` settles when all of it is in, or rejects for a
   * corrupt or truncated file; `cancel()` stops reading (and so the download). */
  async function unpack(source) {
    const gz = source instanceof ReadableStream ? source : new Blob([source]).stream();
    const reader = gz.pipeThrough(new DecompressionStream("gzip")).getReader();
    const cancel = () => reader.cancel().catch(() => {});
    try {
      return await unpackFrom(reader, cancel);
    } catch (err) {
      cancel();
      throw err;
    }
  }

  async function unpackFrom(reader, cancel) {
    let head = new Uint8Array(0);
    const more = async () => {
      const { done, value } = await reader.read();
      if (done) throw new Error("a truncated snapshot");
      const joined = new Uint8Array(head.length + value.length);
      joined.set(head);
      joined.set(value, head.length);
      head = joined;
    };
    while (head.length < 12) await more();
    if (new TextDecoder().decode(head.subarray(0, 8)) !== "KVSNAP02") throw new Error("not a kvlab snapshot (or an older format)");
    const n = new DataView(head.buffer).getUint32(8, true);
    const start = 12 + n + ((8 - ((12 + n) % 8)) % 8);
    while (head.length < start) await more();
    const header = JSON.parse(new TextDecoder().decode(head.subarray(12, 12 + n)));
    if (!(header.memory >= header.image)) throw new Error("a snapshot whose header does not add up");
    const snapshot = new Uint8Array(header.memory);
    const fileBytes = new Uint8Array(header.files.reduce((sum, [, size]) => sum + size, 0));
    let at = 0; // bytes placed after the header: the image, then the files
    const put = (chunk) => {
      const toImage = Math.max(0, Math.min(chunk.length, header.image - at));
      if (toImage) snapshot.set(chunk.subarray(0, toImage), at);
      if (chunk.length > toImage) {
        if (at + chunk.length > header.image + fileBytes.length) throw new Error("a snapshot longer than its header says");
        fileBytes.set(chunk.subarray(toImage), at + toImage - header.image);
      }
      at += chunk.length;
    };
    put(head.subarray(start));
    const rest = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        put(value);
      }
      if (at !== header.image + fileBytes.length) throw new Error("a truncated snapshot");
      let offset = 0;
      return header.files.map(([path, size]) => [path, fileBytes.subarray(offset, (offset += size))]);
    })();
    rest.catch(cancel); // a failure is read where it is awaited
    return { header, snapshot, rest, cancel };
  }

  /* opts: {indexURL, stdLibURL, snapshotGz (bytes, a promise of them, or a stream), stdout, stderr} */
  async function loadFromSnapshot(opts) {
    const { header, snapshot, rest, cancel } = await unpack(await opts.snapshotGz);
    try {
      return await restore(opts, header, snapshot, rest);
    } finally {
      cancel(); // after a failure, the rest of the download is not wanted; once all is in, a no-op
    }
  }

  async function restore(opts, header, snapshot, rest) {
    const create = global._createPyodideModule;
    if (typeof create !== "function") throw new Error("pyodide.asm.js is not loaded");
    global._createPyodideModule = async (settings) => {
      const M = await create(settings); // while the image is unpacked
      const files = await rest;
      const magicOffset = new Uint32Array(snapshot.buffer, snapshot.byteOffset, 4)[1]; // where the image starts
      const image = snapshot.subarray(magicOffset);
      const u32 = (addr) => new DataView(image.buffer, image.byteOffset + addr, 4).getUint32(0, true);
      for (const [path, data] of files) {
        M.FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
        M.FS.writeFile(path, data);
      }
      for (const lib of header.dylibs) {
        // the handle as the snapshot has it: loaded (byte 8), memory base (12), size, table base (20), size
        M.HEAPU8[lib.handle + 8] = 1;
        for (const off of [12, 16, 20, 24]) M.HEAPU32[(lib.handle + off) >>> 2] = u32(lib.handle + off);
        await M.loadDynamicLibrary(lib.name, { global: lib.global, nodelete: true, loadAsync: true, fs: M.FS }, lib.global ? null : {}, lib.handle);
      }
      if (M.wasmTable.length !== header.table) throw new Error(`function table ${M.wasmTable.length}, the snapshot's ${header.table}`);
      return M;
    };
    let py;
    try {
      py = await global.loadPyodide({ indexURL: opts.indexURL, stdLibURL: opts.stdLibURL, _loadSnapshot: snapshot, stdout: opts.stdout, stderr: opts.stderr });
    } finally {
      global._createPyodideModule = create;
    }
    // the image is every reader's: a module that drew random state at import starts over here
    for (const name of header.reseed || []) py.runPython(`import sys; sys.modules[${JSON.stringify(name)}].seed()`);
    // numpy's C code, through the restored side modules; a broken restore traps here, not later
    py.runPython("import numpy as _np; assert int(_np.arange(6).reshape(2, 3).sum()) == 15; del _np");
    return py;
  }

  global.kvlabSnapshot = { loadFromSnapshot, unpack };
})(typeof self !== "undefined" ? self : globalThis);
