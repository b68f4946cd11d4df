// Bytecode for the browser's Python, made by the same Python (Pyodide in Node).
//
//   node sitebuild/bytecode.mjs <pyodide dir> <numpy wheel> <kvlab zip> <out zip>
//
// Boots Pyodide from node_modules, installs the numpy wheel the site serves and
// kvlab's zip, imports everything a widget can import (bridge.warm_one until
// done), then writes one zip of __pycache__/*.cpython-312.pyc for every module
// imported from site-packages, as unchecked-hash pycs (PEP 552): the browser's
// importer uses them without compiling the source (whose mtime it cannot trust
// after unzipping). sitebuild/bytecode.py adds them to kvlab's zip.
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { loadPyodide } from "pyodide";

const [pyodideDir, wheel, kvlabZip, out] = process.argv.slice(2);
const py = await loadPyodide({ indexURL: pyodideDir + "/", stdout: () => {}, stderr: (s) => console.error(s) });
await py.loadPackage(pathToFileURL(wheel).href, { messageCallback: () => {}, errorCallback: (s) => console.error(s) });
const site = py.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
py.unpackArchive(new Uint8Array(readFileSync(kvlabZip)), "zip", { extractDir: site });
py.runPython(`
import importlib.util, io, marshal, sys, zipfile
from pathlib import Path
import kvlab, kvlab.bridge
while kvlab.bridge.warm_one():
    pass
# numpy imports these on first use, not with numpy: kvlab's functions use them (np.random in attention,
# kv_cache, decoding, eviction), so a reader's first call would compile them in the browser
import numpy.random, numpy.linalg
# Node's Pyodide names site-packages "//lib/…": POSIX keeps a leading "//"
site = Path("/" + ${JSON.stringify(site)}.lstrip("/"))
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
    files = sorted({Path("/" + m.__file__.lstrip("/")) for m in list(sys.modules.values()) if getattr(m, "__file__", None)})
    for src in files:
        if src.suffix != ".py" or not src.is_relative_to(site):
            continue
        source = src.read_bytes()
        rel = src.relative_to(site)
        code = compile(source, rel.as_posix(), "exec", dont_inherit=True)
        # PEP 552 header: magic, flags 0b01 (hash-based, not checked), the source's hash
        pyc = importlib.util.MAGIC_NUMBER + (1).to_bytes(4, "little") + importlib.util.source_hash(source) + marshal.dumps(code)
        name = Path(importlib.util.cache_from_source(str(src))).relative_to(site).as_posix()
        info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        zf.writestr(info, pyc)
Path("/tmp/pyc.zip").write_bytes(buf.getvalue())
`);
writeFileSync(out, py.FS.readFile("/tmp/pyc.zip"));
