"""mkdocs hooks: the site's build steps, in the order mkdocs runs them.

on_config        put pycode/ on sys.path (fresh on every rebuild, so `serve`
                 picks up edits to kvlab), list the vendored runtimes
on_files         add the generated assets: runtime + widget JS, styles, the
                 kvlab package as a zip for Pyodide, the manifest the browser
                 reads, and the vendored runtimes themselves
on_page_markdown widget blocks → placeholders (rendered with build-time data)
on_page_content  placeholders → widget HTML
"""
from __future__ import annotations

import hashlib
import io
import json
import sys
import zipfile
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SITE_SRC = ROOT / "site_src"
PYCODE = ROOT / "pycode"
sys.path.insert(0, str(HERE))

import vendor  # noqa: E402
import widget_blocks  # noqa: E402

ASSETS = "assets/kvlab"  # our own generated assets
VENDOR = "assets/vendor"  # third-party runtimes, copied as they are

_state: dict = {}


# ---------------------------------------------------------------------------- stages

def on_config(config: MkDocsConfig) -> MkDocsConfig:
    # Fresh kvlab on every (re)build: `serve` must not render with stale code.
    for name in [m for m in sys.modules if m == "kvlab" or m.startswith("kvlab.")]:
        del sys.modules[name]
    if str(PYCODE) not in sys.path:
        sys.path.insert(0, str(PYCODE))
    _state["vendored"] = vendor.vendored_files(log=lambda msg: print(msg, file=sys.stderr))
    _state["widgets"] = widget_blocks.discover_widgets()
    _state["renderer"] = widget_blocks.WidgetRenderer(_state["widgets"])
    _state["pages"] = {}
    for script in ("manifest.js", "runtime.js", "widgets.js"):
        path = f"{ASSETS}/{script}"
        if path not in [str(s) for s in config.extra_javascript]:
            config.extra_javascript.append(path)
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    widgets = _state["widgets"].values()
    generated = {
        f"{ASSETS}/runtime.js": (SITE_SRC / "runtime" / "runtime.js").read_text(encoding="utf-8"),
        f"{ASSETS}/widgets.js": "\n".join(f"// ---- widget: {w.name}\n{w.js}" for w in widgets),
        f"{ASSETS}/kvlab.css": "\n".join(
            [(SITE_SRC / "styles" / "kvlab.css").read_text(encoding="utf-8")] + [w.css for w in widgets]
        ),
    }
    zip_bytes = kvlab_zip()
    zip_name = f"kvlab-{hashlib.sha256(zip_bytes).hexdigest()[:12]}.zip"
    generated[f"{ASSETS}/{zip_name}"] = zip_bytes
    for f in _state["vendored"]:
        files.append(File.generated(config, f"{VENDOR}/{f.dest}", abs_src_path=str(f.src)))
    generated[f"{ASSETS}/manifest.js"] = manifest_js(zip_name, zip_bytes)
    for path, content in generated.items():
        files.append(File.generated(config, path, content=content))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    rendered = []
    renderer = _state["renderer"]

    def block(name: str, params: dict, index: int) -> str:
        uid = f"kv-{name}-{index}"
        try:
            html = renderer.render(name, params, uid=uid, page_url=page.url)
        except Exception as exc:  # a broken widget must stop the build, saying where
            raise SystemExit(f"{page.file.src_uri}: widget {name!r}: {exc}") from exc
        rendered.append(html)
        return f"\n\nKVLABWIDGET{len(rendered) - 1}KVLAB\n\n"

    markdown = widget_blocks.replace_blocks(markdown, block)
    _state["pages"][page.file.src_uri] = rendered
    return markdown


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    for i, widget_html in enumerate(_state["pages"].get(page.file.src_uri, [])):
        html = html.replace(f"<p>KVLABWIDGET{i}KVLAB</p>", widget_html)
    return html


# ---------------------------------------------------------------------------- helpers

def kvlab_zip() -> bytes:
    """The kvlab package (sources + data files), zipped reproducibly for Pyodide."""
    buf = io.BytesIO()
    package = PYCODE / "kvlab"
    paths = sorted(p for p in package.rglob("*") if p.is_file() and p.suffix in (".py", ".json"))
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in paths:
            info = zipfile.ZipInfo(path.relative_to(PYCODE).as_posix(), date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, path.read_bytes())
    return buf.getvalue()


def manifest_js(zip_name: str, zip_bytes: bytes) -> str:
    """What the browser runtime loads, with sizes (for progress) and hashes."""
    files = {}
    for f in _state["vendored"]:
        data = f.src.read_bytes()
        files[f"vendor/{f.dest}"] = {"size": len(data), "sha256": vendor.sha256_of(data)}
    files[f"kvlab/{zip_name}"] = {"size": len(zip_bytes), "sha256": vendor.sha256_of(zip_bytes)}
    manifest = {
        "pyodideVersion": vendor.PYODIDE_VERSION,
        "numpyWheel": vendor.NUMPY_WHEEL,
        "kvlabZip": f"kvlab/{zip_name}",
        "files": files,
    }
    return "window.kvlabManifest = " + json.dumps(manifest, indent=1, sort_keys=True) + ";\n"
