"""Python's standard library, trimmed to what the first Python widget imports (issue 42, route 3).

Pyodide's python_stdlib.zip is 2.36 MB (554 entries, sent as it is: a zip is not compressed again by
the host); the modules Python's start, numpy, kvlab and every widget function import from it are 156
of them, 0.82 MB. The worker serves the trimmed zip in the full one's place over http and keeps the
full one as a fallback (worker.js: a finder at the end of sys.meta_path fetches it on the first
import that misses, and puts it where the trimmed one was); the offline build and the page fallback
load the full one.

MODULES is what bench/runtime_stdlib.py prints: it boots Pyodide in Node, imports every kvlab module,
calls every widget function with the inputs of tests/python/widget_calls.py, lists the modules
imported from the zip, then runs the same calls with the trimmed zip and checks every answer is the
same (107 of 107 on 2026-12-05). Run it again when kvlab imports something new (a miss costs one
2.4 MB download, not a failure).
"""

from __future__ import annotations

import io
import zipfile

MODULES = (
    "__future__",
    "_compat_pickle",
    "_compression",
    "_pyodide",
    "_pyodide._base",
    "_pyodide._core_docs",
    "_pyodide._future_helper",
    "_pyodide._importhook",
    "_pyodide.docs_argspec",
    "_pyodide.docstring",
    "_pyodide.jsbind",
    "_sysconfigdata__emscripten_wasm32-emscripten",
    "_weakrefset",
    "ast",
    "asyncio",
    "asyncio.base_events",
    "asyncio.base_futures",
    "asyncio.base_subprocess",
    "asyncio.base_tasks",
    "asyncio.constants",
    "asyncio.coroutines",
    "asyncio.events",
    "asyncio.exceptions",
    "asyncio.format_helpers",
    "asyncio.futures",
    "asyncio.locks",
    "asyncio.log",
    "asyncio.mixins",
    "asyncio.protocols",
    "asyncio.queues",
    "asyncio.runners",
    "asyncio.selector_events",
    "asyncio.sslproto",
    "asyncio.staggered",
    "asyncio.streams",
    "asyncio.subprocess",
    "asyncio.taskgroups",
    "asyncio.tasks",
    "asyncio.threads",
    "asyncio.timeouts",
    "asyncio.transports",
    "asyncio.trsock",
    "asyncio.unix_events",
    "base64",
    "bisect",
    "bz2",
    "calendar",
    "collections",
    "collections.abc",
    "concurrent",
    "concurrent.futures",
    "concurrent.futures._base",
    "contextlib",
    "contextvars",
    "copy",
    "copyreg",
    "csv",
    "ctypes",
    "ctypes._endian",
    "dataclasses",
    "datetime",
    "dis",
    "email",
    "email._encoded_words",
    "email._parseaddr",
    "email._policybase",
    "email.base64mime",
    "email.charset",
    "email.encoders",
    "email.errors",
    "email.header",
    "email.iterators",
    "email.message",
    "email.quoprimime",
    "email.utils",
    "encodings",
    "encodings.aliases",
    "encodings.cp437",
    "encodings.utf_8",
    "enum",
    "fnmatch",
    "functools",
    "hashlib",
    "heapq",
    "hmac",
    "importlib",
    "importlib._abc",
    "importlib.abc",
    "importlib.metadata",
    "importlib.metadata._adapters",
    "importlib.metadata._collections",
    "importlib.metadata._functools",
    "importlib.metadata._itertools",
    "importlib.metadata._meta",
    "importlib.metadata._text",
    "importlib.resources",
    "importlib.resources._adapters",
    "importlib.resources._common",
    "importlib.resources._legacy",
    "importlib.resources.abc",
    "inspect",
    "ipaddress",
    "json",
    "json.decoder",
    "json.encoder",
    "json.scanner",
    "keyword",
    "linecache",
    "locale",
    "logging",
    "numbers",
    "opcode",
    "operator",
    "pathlib",
    "pickle",
    "platform",
    "pyodide",
    "pyodide._package_loader",
    "pyodide._state",
    "pyodide.code",
    "pyodide.common",
    "pyodide.ffi",
    "pyodide.webloop",
    "quopri",
    "random",
    "re",
    "re._casefix",
    "re._compiler",
    "re._constants",
    "re._parser",
    "reprlib",
    "secrets",
    "selectors",
    "shutil",
    "signal",
    "socket",
    "string",
    "struct",
    "subprocess",
    "sysconfig",
    "tarfile",
    "tempfile",
    "textwrap",
    "threading",
    "token",
    "tokenize",
    "traceback",
    "types",
    "typing",
    "urllib",
    "urllib.parse",
    "warnings",
    "weakref",
    "zipfile",
    "zipfile._path",
    "zipfile._path.glob",
)


def entries(names: list[str], modules=MODULES) -> list[str]:
    """The zip entries that hold `modules`, and the packages above each (their directories and
    __init__.py), in the zip's own order."""
    keep = set()
    for m in modules:
        parts = m.split(".")
        for i in range(1, len(parts) + 1):
            base = "/".join(parts[:i])
            keep.update((base + ".py", base + "/", base + "/__init__.py"))
    return [n for n in names if n in keep]


def trimmed(full: bytes, modules=MODULES) -> bytes:
    """The standard library zip with only `modules` (deterministic bytes), and FULL_LIST: the name of
    every module of the full one, one a line (worker.js's finder fetches the full zip only for those)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(full)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        names = src.namelist()
        listing = sorted({module_of(n) for n in names if n.endswith(".py")})
        for name in entries(names, modules):
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = src.getinfo(name).external_attr
            dst.writestr(info, src.read(name), compresslevel=9)
        info = zipfile.ZipInfo(FULL_LIST, date_time=(2020, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        dst.writestr(info, "\n".join(listing) + "\n", compresslevel=9)
    return out.getvalue()


FULL_LIST = "kvlab-full-stdlib.txt"


def module_of(entry: str) -> str:
    """ "email/mime/text.py" → "email.mime.text", "json/__init__.py" → "json"."""
    name = entry[: -len(".py")].replace("/", ".")
    return name[: -len(".__init__")] if name.endswith(".__init__") else name
