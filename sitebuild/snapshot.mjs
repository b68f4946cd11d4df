// A memory snapshot of the started Python runtime (Pyodide 0.27's _makeSnapshot):
// Python started, numpy and kvlab imported, made by the same Pyodide in Node.
//
//   node sitebuild/snapshot.mjs <pyodide dir> <numpy wheel> <kvlab zip> <stdlib zip> <out .gz> [--brotli]
//
// <stdlib zip>: the standard library the worker will serve in its place (python_stdlib.min.zip:
// the zip importer's directory of it is in the image; the worker's finder fetches the full one
// on a miss, as on the usual start).
//
// What Pyodide 0.27.7 snapshots is the wasm linear memory (HEAP8) plus the JS
// references Python holds (the "hiwire" table), nothing else: not the file
// system (MEMFS lives in JS), not numpy's extension modules (each a wasm side
// module: its code and its slots in the function table live in JS). So:
//   - numpy's wheel and kvlab's zip are unzipped here in Node and written into the
//     file system from JS (not with unpackArchive: loadPackage leaves an entry in
//     pyodide.loadedPackages, which makeMemorySnapshot refuses, "Unexpected hiwire
//     entry at index 6"; and unpackArchive passes the zips through Python's heap,
//     whose freed blocks keep them: ~2 MB more in the gzipped image);
//   - the header records, for each side module numpy's import loaded, its path
//     and its `struct dso` handle in memory (which holds its memory and table
//     bases): site_src/runtime/snapshot.js instantiates them again at those bases
//     before the memory image is laid back, then checks numpy works;
//   - the file system the restored runtime still reads goes in the same file: numpy's
//     side modules and every file of numpy and kvlab that a later import can read, less
//     what no import reads (.pyi stubs, C headers, static libraries) and the source and
//     bytecode of the modules already imported (their code is in the image). The worker
//     then downloads neither the wheel nor kvlab's zip on this path.
// Deterministic: PYTHONHASHSEED=0 (else the hash secret, drawn at start, lays dicts out
// differently on every build), a clock that counts its calls (file times), `random` seeded, files in sorted
// order, gzip without a timestamp (two builds: the same sha256).
// Output: gzip of "KVSNAP02" | u32 header length | header JSON | pad to 8 | image | files.
import { readFileSync, writeFileSync } from "node:fs";
import { gzipSync, inflateRawSync, brotliCompressSync, constants } from "node:zlib";
import { loadPyodide } from "pyodide";

const args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const brotli = process.argv.includes("--brotli");
const [pyodideDir, wheel, kvlabZip, stdlibZip, out] = args;

/* The files of a zip: [[name, bytes]] (central directory; stored or deflated). */
function unzip(zip) {
  const dv = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  let eocd = zip.length - 22;
  while (eocd >= 0 && dv.getUint32(eocd, true) !== 0x06054b50) eocd--;
  if (eocd < 0) throw new Error("zip: no end of central directory");
  const files = [];
  let p = dv.getUint32(eocd + 16, true);
  for (let i = 0, n = dv.getUint16(eocd + 10, true); i < n; i++) {
    const method = dv.getUint16(p + 10, true), csize = dv.getUint32(p + 20, true);
    const nlen = dv.getUint16(p + 28, true), xlen = dv.getUint16(p + 30, true), clen = dv.getUint16(p + 32, true);
    const local = dv.getUint32(p + 42, true);
    const name = zip.subarray(p + 46, p + 46 + nlen).toString("utf8");
    const start = local + 30 + dv.getUint16(local + 26, true) + dv.getUint16(local + 28, true);
    const data = zip.subarray(start, start + csize);
    if (!name.endsWith("/")) files.push([name, method === 0 ? data : inflateRawSync(data)]);
    p += 46 + nlen + xlen + clen;
  }
  return files;
}

// file times (MEMFS stamps them with Date.now(), and the importers keep them) and Python's clock
let clock = 1767225600000; // 2026-01-01, one ms a call
Date.now = () => clock++;
const py = await loadPyodide({
  indexURL: pyodideDir + "/",
  stdLibURL: stdlibZip,
  env: { PYTHONHASHSEED: "0" },
  _makeSnapshot: true,
  stdout: () => {},
  stderr: (s) => console.error(s),
});
const FS = py.FS;
const site = py.runPython("import sysconfig; sysconfig.get_paths()['purelib']").replace(/^\/+/, "/"); // "//lib/…": prefix "/"
const written = new Map(); // path → bytes
for (const zip of [wheel, kvlabZip])
  for (const [name, bytes] of unzip(readFileSync(zip))) {
    const path = site + "/" + name;
    FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
    FS.writeFile(path, bytes);
    written.set(path, bytes);
  }
// what the worker's start imports today (loadPython), and nothing that draws random state:
// a snapshot is the same for every reader, so a module seeded at import would repeat
py.runPython("import numpy, kvlab, kvlab.bridge, gc\ngc.collect()");
// the files of the modules imported now: their code is in the image, no import reads them again
const imported = new Set(
  JSON.parse(
    py.runPython(`
import sys, json, importlib.util
out = []
for name, mod in list(sys.modules.items()):
    f = getattr(mod, "__file__", None)
    if f and f.endswith(".py"):
        out += [f, importlib.util.cache_from_source(f)]
json.dumps(out)
`)
  )
);
const M = py._module;
const L = M.LDSO;
const handles = new Map(Object.entries(L.loadedLibsByHandle).map(([h, d]) => [d, Number(h)]));
const dylibs = Object.entries(L.loadedLibsByName) // insertion order: the order they loaded in
  .filter(([name]) => name !== "__main__")
  .map(([name, dso]) => ({ name, handle: handles.get(dso), global: !!dso.global }));
if (dylibs.some((d) => !d.handle)) throw new Error("a side module without a dlopen handle: cannot be restored");
const randomImported = py.runPython("'random' in __import__('sys').modules");
// seeded from the OS at import: a fixed state here (the restore seeds it again for each reader)
if (randomImported) py.runPython("import random; random.seed(0)");
const unread = /\.(pyi|h|a)$|\/include\/|\.dist-info\/(RECORD|WHEEL)$/;
const keep = [...written.keys()].filter((p) => !imported.has(p) && !unread.test(p)).sort();
const snap = py.makeMemorySnapshot();
let end = snap.length; // the image's trailing zeros (free memory never touched) are not shipped
while (end > 0 && snap[end - 1] === 0) end--;
end = (end + 7) & ~7;
const header = {
  version: 2,
  pyodide: py.version,
  table: M.wasmTable.length,
  dylibs,
  reseed: randomImported ? ["random"] : [],
  memory: snap.length,
  image: end,
  files: keep.map((p) => [p, written.get(p).length]),
};
const head = new TextEncoder().encode(JSON.stringify(header));
const pad = (8 - ((12 + head.length) % 8)) % 8;
const fileBytes = keep.reduce((n, p) => n + written.get(p).length, 0);
const buf = new Uint8Array(12 + head.length + pad + end + fileBytes);
buf.set(new TextEncoder().encode("KVSNAP02"), 0);
new DataView(buf.buffer).setUint32(8, head.length, true);
buf.set(head, 12);
let at = 12 + head.length + pad;
buf.set(snap.subarray(0, end), at);
at += end;
for (const p of keep) {
  buf.set(written.get(p), at);
  at += written.get(p).length;
}
const gz = gzipSync(buf, { level: 9 });
writeFileSync(out, gz);
const report = { raw: buf.length, memory: snap.length, image: end, files: keep.length, fileBytes, gz: gz.length, dylibs: dylibs.length, table: header.table };
if (brotli) report.br = brotliCompressSync(buf, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_LGWIN]: 24, [constants.BROTLI_PARAM_SIZE_HINT]: buf.length } }).length;
console.log(JSON.stringify(report));
