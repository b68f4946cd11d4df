/* Python from a memory snapshot (sitebuild/snapshot.mjs): Pyodide 0.27's
 * _loadSnapshot, plus what that API leaves out for numpy. worker.js loads it (as
 * assets/kvlab/snapshot.js) only when the manifest names a snapshot, and no site build does
 * yet: bench/results/2026-12-05-runtime-routes.md says why; bench/runtime_routes.py and
 * tests/browser/test_runtime_routes.py serve one.
 *
 * Pyodide lays the snapshot's memory image back and reconnects Python's JS
 * references; numpy's extension modules (wasm side modules) are not in it. So,
 * between the module's creation and the image being laid back (a wrapper around
 * the global _createPyodideModule), this instantiates each side module again at
 * the memory and table bases its `struct dso` handle recorded: their data
 * segments and constructors then write into memory that the image overwrites
 * right after. The file system is not in the image either: numpy's wheel and
 * kvlab's zip are unzipped into it here (in JS: no Python may run before the
 * image is back). Any failure throws; the caller falls back to a plain start.
 */
(function (global) {
  "use strict";

  async function gunzip(bytes) {
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  function parse(raw) {
    if (new TextDecoder().decode(raw.subarray(0, 8)) !== "KVSNAP01") throw new Error("not a kvlab snapshot");
    const n = new DataView(raw.buffer, raw.byteOffset).getUint32(8, true);
    const header = JSON.parse(new TextDecoder().decode(raw.subarray(12, 12 + n)));
    const start = 12 + n + ((8 - ((12 + n) % 8)) % 8);
    return { header, snapshot: raw.subarray(start) };
  }

  /* The entries of a zip: [{name, method, data (compressed), size}]; central directory only. */
  function zipEntries(zip) {
    const dv = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
    let eocd = zip.length - 22;
    while (eocd >= 0 && dv.getUint32(eocd, true) !== 0x06054b50) eocd--;
    if (eocd < 0) throw new Error("zip: no end of central directory");
    const count = dv.getUint16(eocd + 10, true);
    let p = dv.getUint32(eocd + 16, true);
    const out = [];
    const dec = new TextDecoder();
    for (let i = 0; i < count; i++) {
      if (dv.getUint32(p, true) !== 0x02014b50) throw new Error("zip: bad central directory");
      const method = dv.getUint16(p + 10, true);
      const csize = dv.getUint32(p + 20, true);
      const size = dv.getUint32(p + 24, true);
      const nlen = dv.getUint16(p + 28, true), xlen = dv.getUint16(p + 30, true), clen = dv.getUint16(p + 32, true);
      const local = dv.getUint32(p + 42, true);
      const name = dec.decode(zip.subarray(p + 46, p + 46 + nlen));
      const lstart = local + 30 + dv.getUint16(local + 26, true) + dv.getUint16(local + 28, true);
      out.push({ name, method, size, data: zip.subarray(lstart, lstart + csize) });
      p += 46 + nlen + xlen + clen;
    }
    return out;
  }

  async function inflateRaw(data) {
    const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  async function unzipInto(FS, zip, dir) {
    const entries = zipEntries(zip);
    const files = await Promise.all(entries.map((e) => (e.name.endsWith("/") ? null : e.method === 0 ? e.data : inflateRaw(e.data))));
    entries.forEach((e, i) => {
      const path = dir + "/" + e.name.replace(/\/$/, "");
      if (!files[i]) return FS.mkdirTree(path);
      FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
      FS.writeFile(path, files[i]);
    });
  }

  /* opts: {indexURL, snapshotGz, zips: [bytes, …] unzipped into site-packages, stdout, stderr} */
  async function loadFromSnapshot(opts) {
    const { header, snapshot } = parse(await gunzip(await opts.snapshotGz));
    const create = global._createPyodideModule;
    if (typeof create !== "function") throw new Error("pyodide.asm.js is not loaded");
    const magicOffset = new Uint32Array(snapshot.buffer, snapshot.byteOffset, 4)[1]; // where the image starts
    const image = snapshot.subarray(magicOffset);
    const u32 = (addr) => new DataView(image.buffer, image.byteOffset + addr, 4).getUint32(0, true);
    global._createPyodideModule = async (settings) => {
      const M = await create(settings);
      const site = M.API.sitePackages;
      for (const zip of opts.zips) await unzipInto(M.FS, await zip, site);
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
      py = await global.loadPyodide({ indexURL: opts.indexURL, _loadSnapshot: snapshot, stdout: opts.stdout, stderr: opts.stderr });
    } finally {
      global._createPyodideModule = create;
    }
    // the image is every reader's: a module that drew random state at import starts over here
    for (const name of header.reseed || []) py.runPython(`import sys; sys.modules[${JSON.stringify(name)}].seed()`);
    // numpy's C code, through the restored side modules; a broken restore traps here, not later
    py.runPython("import numpy as _np; assert int(_np.arange(6).reshape(2, 3).sum()) == 15; del _np");
    return py;
  }

  global.kvlabSnapshot = { loadFromSnapshot, unzipInto, zipEntries };
})(typeof self !== "undefined" ? self : globalThis);
