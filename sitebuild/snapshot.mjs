// A memory snapshot of the started Python runtime (Pyodide 0.27's _makeSnapshot):
// Python started, numpy and kvlab imported, made by the same Pyodide in Node.
//
//   node sitebuild/snapshot.mjs <pyodide dir> <numpy wheel> <kvlab zip> <out .bin.gz>
//
// What Pyodide 0.27.7 snapshots is the wasm linear memory (HEAP8) plus the JS
// references Python holds (the "hiwire" table), nothing else: not the file
// system (MEMFS lives in JS), not numpy's extension modules (each a wasm side
// module: its code and its slots in the function table live in JS). So:
//   - numpy goes in with unpackArchive, not loadPackage: loadPackage leaves an
//     entry in pyodide.loadedPackages, and makeMemorySnapshot then refuses
//     ("Unexpected hiwire entry at index 6");
//   - the header records, for each side module numpy's import loaded, its path
//     and its `struct dso` handle in memory (which holds its memory and table
//     bases): site_src/runtime/snapshot.js instantiates them again at those bases
//     before the memory image is laid back, then checks numpy works.
// Output: gzip of  "KVSNAP01" | u32 header length | header JSON | pad to 8 | snapshot.
import { readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { loadPyodide } from "pyodide";

const [pyodideDir, wheel, kvlabZip, out] = process.argv.slice(2);
const py = await loadPyodide({ indexURL: pyodideDir + "/", _makeSnapshot: true, stdout: () => {}, stderr: (s) => console.error(s) });
const site = py.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
py.unpackArchive(new Uint8Array(readFileSync(wheel)), "wheel", { extractDir: site });
py.unpackArchive(new Uint8Array(readFileSync(kvlabZip)), "zip", { extractDir: site });
// what the worker's start imports today (loadPython), and nothing that draws random state:
// a snapshot is the same for every reader, so a module seeded at import would repeat
py.runPython(`
import numpy, kvlab, kvlab.bridge, gc, sys
gc.collect()
`);
const M = py._module;
const L = M.LDSO;
const handles = new Map(Object.entries(L.loadedLibsByHandle).map(([h, d]) => [d, Number(h)]));
const dylibs = Object.entries(L.loadedLibsByName) // insertion order: the order they loaded in
  .filter(([name]) => name !== "__main__")
  .map(([name, dso]) => ({ name, handle: handles.get(dso), global: !!dso.global }));
if (dylibs.some((d) => !d.handle)) throw new Error("a side module without a dlopen handle: cannot be restored");
const randomImported = py.runPython("'random' in __import__('sys').modules");
const header = {
  version: 1,
  pyodide: py.version,
  table: M.wasmTable.length,
  dylibs,
  reseed: randomImported ? ["random"] : [],
};
const snap = py.makeMemorySnapshot();
const head = new TextEncoder().encode(JSON.stringify(header));
const pad = (8 - ((12 + head.length) % 8)) % 8;
const buf = new Uint8Array(12 + head.length + pad + snap.length);
buf.set(new TextEncoder().encode("KVSNAP01"), 0);
new DataView(buf.buffer).setUint32(8, head.length, true);
buf.set(head, 12);
buf.set(snap, 12 + head.length + pad);
writeFileSync(out, gzipSync(buf, { level: 9 }));
console.log(JSON.stringify({ raw: buf.length, gz: readFileSync(out).length, dylibs: dylibs.length, table: header.table }));
