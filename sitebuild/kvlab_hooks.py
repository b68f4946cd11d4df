"""mkdocs hooks: the site's build steps, in the order mkdocs runs them.

on_config        put pycode/ on sys.path (fresh on every rebuild, so `serve`
                 picks up edits to kvlab), list the vendored runtimes
on_files         add the generated assets: runtime + widget JS, styles, the
                 kvlab package as a zip for Pyodide, the manifest the browser
                 reads, and the vendored runtimes themselves; drop three rules of
                 material's CSS that restyled every page at load
on_page_markdown widget blocks → placeholders (rendered with build-time data)
on_page_content  placeholders → widget HTML

Two variants come from the same steps: the http site, and (KVLAB_OFFLINE=true)
the file:// site for the offline zip, where every binary the runtime fetches
is also shipped as a classic script holding it in base64 (Chromium refuses
fetch() from file://, but loads <script src>).
"""

from __future__ import annotations

import html

import base64
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SITE_SRC = ROOT / "site_src"
PYCODE = ROOT / "pycode"
sys.path.insert(0, str(HERE))

import bytecode  # noqa: E402
import snapshot  # noqa: E402
import vendor  # noqa: E402
import widget_blocks  # noqa: E402

ASSETS = "assets/kvlab"  # our own generated assets
MODELS = "assets/models/tiny"  # the tiny transformer, as exported (models/tiny/)
MODEL_DIR = ROOT / "models" / "tiny"
MODEL_FILES = ("model.onnx", "tokenizer.json", "weights.npz")  # weights.npz: for Pyodide (kvlab.bridge.BROWSER_FILES)
VENDOR = "assets/vendor"  # third-party runtimes, copied as they are
# site_src/runtime/ files that make the page's runtime.js, in load order; worker.js
# and model.js run in the worker and are served on their own
PAGE_RUNTIME = ("loader.js", "bridge.js", "kit.js", "context.js", "embed.js")

_state: dict = {}


# ---------------------------------------------------------------------------- stages


def offline_build() -> bool:
    return os.environ.get("KVLAB_OFFLINE", "").lower() in ("1", "true", "yes")


# Before the offline plugin (run first), so that it finds our self-hosted
# iframe-worker shim and does not add the one from unpkg.com.
@event_priority(100)
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    # Fresh kvlab on every (re)build: `serve` must not render with stale code.
    for name in [m for m in sys.modules if m == "kvlab" or m.startswith("kvlab.")]:
        del sys.modules[name]
    if str(PYCODE) not in sys.path:
        sys.path.insert(0, str(PYCODE))
    if any("tabbed" in str(ext) for ext in config.markdown_extensions):
        raise SystemExit(
            "mkdocs.yml: content tabs are on, but the build drops material's rules for them (MATERIAL_RULES_DROPPED)"
        )
    _state["vendored"] = vendor.vendored_files(log=lambda msg: print(msg, file=sys.stderr))
    _state["widgets"] = widget_blocks.discover_widgets()
    _state["renderer"] = widget_blocks.WidgetRenderer(_state["widgets"])
    _state["pages"] = {}
    for script in ("manifest.js", "runtime.js", "widgets.js"):
        path = f"{ASSETS}/{script}"
        if path not in [str(s) for s in config.extra_javascript]:
            config.extra_javascript.append(path)
    if offline_build():
        # material's search runs in an iframe from file:// through this shim, which
        # replaces window.Worker; keep the browser's own for the runtime first
        config.extra["polyfills"] = [f"{ASSETS}/native-worker.js", f"{VENDOR}/iframe-worker/shim.js"]
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    widgets = _state["widgets"].values()
    runtime = SITE_SRC / "runtime"
    generated = {
        # the page's part of the runtime: one file, its parts in load order
        f"{ASSETS}/runtime.js": "\n".join(
            f"// ---- site_src/runtime/{name}\n" + (runtime / name).read_text(encoding="utf-8") for name in PAGE_RUNTIME
        ),
        # the worker's part: loaded only when a reader makes a widget live
        f"{ASSETS}/worker.js": (runtime / "worker.js").read_text(encoding="utf-8"),
        f"{ASSETS}/model.js": (runtime / "model.js").read_text(encoding="utf-8"),
        f"{ASSETS}/embed-host.js": (runtime / "embed-host.js").read_text(encoding="utf-8"),
        # an embed page's first script, in its <head>: ?compact=1 → kv-compact before the first paint
        f"{ASSETS}/embed-head.js": (runtime / "embed-head.js").read_text(encoding="utf-8"),
        f"{ASSETS}/native-worker.js": "// the browser's Worker, before the offline search's iframe-worker shim replaces it\n"
        "window.kvlabNativeWorker = window.Worker;\n",
        f"{ASSETS}/widgets.js": "\n".join(f"// ---- widget: {w.name}\n{w.js}" for w in widgets),
        f"{ASSETS}/kvlab.css": "\n".join(
            [(SITE_SRC / "styles" / "kvlab.css").read_text(encoding="utf-8")] + [w.css for w in widgets]
        ),
        f"{ASSETS}/embed.css": (SITE_SRC / "styles" / "embed.css").read_text(encoding="utf-8"),
    }
    zip_bytes = kvlab_zip()
    zip_name = f"kvlab-{hashlib.sha256(zip_bytes).hexdigest()[:12]}.zip"
    generated[f"{ASSETS}/{zip_name}"] = zip_bytes
    for f in _state["vendored"]:
        files.append(File.generated(config, f"{VENDOR}/{f.dest}", abs_src_path=str(f.src)))
    for name in MODEL_FILES:
        files.append(File.generated(config, f"{MODELS}/{name}", abs_src_path=str(MODEL_DIR / name)))
    snap = None
    if not offline_build():
        # the started runtime's memory snapshot (snapshot.py): http only, the worker's first choice
        snap_bytes = snapshot.snapshot_gz(zip_bytes, log=lambda msg: print(msg, file=sys.stderr))
        snap = (f"kvlab/python-{hashlib.sha256(snap_bytes).hexdigest()[:12]}.snap.gz", snap_bytes)
        generated[f"{ASSETS}/{snap[0].removeprefix('kvlab/')}"] = snap_bytes
        generated[f"{ASSETS}/snapshot.js"] = (runtime / "snapshot.js").read_text(encoding="utf-8")
    generated[f"{ASSETS}/manifest.js"] = manifest_js(zip_name, zip_bytes, snap)
    if offline_build():
        for f in _state["vendored"]:
            if f.payload:
                generated[f"{VENDOR}/{f.dest}.js"] = payload_js(f"vendor/{f.dest}", f.src.read_bytes())
        generated[f"{ASSETS}/{zip_name}.js"] = payload_js(f"kvlab/{zip_name}", zip_bytes)
        for script in ("worker.js", "model.js"):  # a file:// worker gets its scripts from the page
            generated[f"{ASSETS}/{script}.js"] = payload_js(f"kvlab/{script}", generated[f"{ASSETS}/{script}"].encode())
        for name in MODEL_FILES:
            generated[f"{MODELS}/{name}.js"] = payload_js(f"models/tiny/{name}", (MODEL_DIR / name).read_bytes())
    for name, widget in _state["widgets"].items():
        generated[f"embed/{name}.md"] = embed_page_markdown(widget, config.site_url or "")
    check_js_syntax(
        {
            p: c
            for p, c in generated.items()
            if p.startswith(ASSETS)
            and p.endswith(".js")
            and isinstance(c, str)
            and not c.startswith("kvlab.payloads.register")
        }
    )
    for path, content in generated.items():
        files.append(File.generated(config, path, content=content))
    without_material_rules(files, config)
    with_compile_hint(files, config)
    return files


# Rules dropped from material's stylesheets at build, each for a restyle it caused where it
# had nothing to do; the build stops if one is no longer there, word for word (a new material).
MATERIAL_RULES_DROPPED = {
    # palette CSS: transitions off while the colours switch, on an attribute material sets and
    # clears on <body> at every page load, each time a restyle of every element. kvlab.css has
    # the rule on a class set only when the reader switches (palette.js).
    "assets/stylesheets/palette.": [
        "[data-md-color-switching] *,[data-md-color-switching] :after,"
        "[data-md-color-switching] :before{transition-duration:0ms!important}",
    ],
    # main CSS: no margin above the first (below the last) child of a Markdown table's cell. With
    # `table:not([class])` above a bare `:first-child`, a change of any element's class (the class
    # attribute) made Chromium restyle everything below that element: material's `no-js` → `js`
    # on <html> at start-up was a restyle of every element of the page
    # (bench/results/2026-12-02-lighthouse-session9.md). Our
    # Markdown tables' cells hold inline content only, on which a vertical margin does nothing.
    "assets/stylesheets/main.": [
        ".md-typeset table:not([class]) td>:first-child,.md-typeset table:not([class]) th>:first-child{margin-top:0}",
        ".md-typeset table:not([class]) td>:last-child,.md-typeset table:not([class]) th>:last-child{margin-bottom:0}",
        # Content tabs without scripts (pymdownx.tabbed, which kvlab does not use: on_config stops
        # the build if it is switched on): `.no-js` above a bare `:nth-child(n)` made material's
        # swap of `no-js` for `js` on <html> restyle every element of the page, as above.
        re.compile(r"\.md-typeset \.no-js \.tabbed-set>[^{}]*\{[^{}]*\}"),
    ],
}


def without_material_rules(files: Files, config: MkDocsConfig) -> None:
    for prefix, rules in MATERIAL_RULES_DROPPED.items():
        sheet = material_asset(files, prefix, ".min.css")
        css = Path(sheet.abs_src_path).read_text(encoding="utf-8")
        for rule in rules:
            found = rule.findall(css) if isinstance(rule, re.Pattern) else [rule] * css.count(rule)
            if len(found) != 1:
                raise SystemExit(f"{sheet.src_uri}: material's rule {rule!r} changed; see MATERIAL_RULES_DROPPED")
            css = css.replace(found[0], " " * len(found[0]))  # spaces: its source map still holds
        files.remove(sheet)
        files.append(File.generated(config, sheet.src_uri, content=css))


def material_asset(files: Files, prefix: str, suffix: str) -> File:
    """The one file of material's whose path starts with prefix and ends with suffix."""
    found = [f for f in files if f.src_uri.startswith(prefix) and f.src_uri.endswith(suffix)]
    if len(found) != 1:
        raise SystemExit(f"expected one material file {prefix}*{suffix}, found {[f.src_uri for f in found]}")
    return found[0]


def with_compile_hint(files: Files, config: MkDocsConfig) -> None:
    """Material's bundle with V8's compile hint on its first line (as Plotly's, vendor.py).

    The bundle runs most of its functions at load (RxJS pipelines set up every component),
    and V8 compiled each lazily, on the main thread, in the bundle's evaluation task and in
    the DOMContentLoaded task after it. With the hint it compiles them while the script
    streams in, off the main thread, and those two tasks get shorter
    (bench/results/2026-12-02-lighthouse-session8.md). Its source map gets an empty first line, so it still points at the sources.
    """
    bundle = material_asset(files, "assets/javascripts/bundle.", ".min.js")
    source_map = material_asset(files, bundle.src_uri, ".map")
    js = Path(bundle.abs_src_path).read_text(encoding="utf-8")
    mapping = json.loads(Path(source_map.abs_src_path).read_text(encoding="utf-8"))
    mapping["mappings"] = ";" + mapping["mappings"]
    for old, content in ((bundle, vendor.COMPILE_HINT + js), (source_map, json.dumps(mapping))):
        files.remove(old)
        files.append(File.generated(config, old.src_uri, content=content))


def check_js_syntax(scripts: dict[str, str | bytes]) -> None:
    """node --check on our own scripts: one widget's syntax error would stop
    every widget of the site (widgets.js is one file), so it stops the build."""
    with tempfile.TemporaryDirectory() as tmp:
        for path, content in scripts.items():
            file = Path(tmp) / path.replace("/", "_")
            file.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
            done = subprocess.run(["node", "--check", str(file)], capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"{path}: JavaScript syntax error\n{done.stderr.strip()}")


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    rendered = []
    renderer = _state["renderer"]

    seen: dict[str, int] = {}

    def block(name: str, params: dict, index: int) -> str:
        # the anchor counts this widget's name on the page, as its key in a link does
        # (kvlab.widgetKey): gpu-fit's settings and #kv-gpu-fit, prefix-blocks-2's and #kv-prefix-blocks-2
        seen[name] = n = seen.get(name, 0) + 1
        uid = f"kv-{name}" if n == 1 else f"kv-{name}-{n}"
        embed = bool(params.pop("embed", False))
        try:
            widget = _state["widgets"].get(name)
            explained_at = ""
            if widget is not None:
                target = files.get_file_from_path(widget.page)
                if target is None:
                    raise ValueError(f"widget.json names page {widget.page!r}, which does not exist")
                explained_at = get_relative_url(target.url, page.url)
            html = renderer.render(name, params, uid=uid, page_url=explained_at, embed=embed)
        except Exception as exc:  # a broken widget must stop the build, saying where
            raise SystemExit(f"{page.file.src_uri}: widget {name!r}: {exc}") from exc
        rendered.append(html)
        return f"\n\nKVLABWIDGET{len(rendered) - 1}KVLAB\n\n"

    markdown = widget_blocks.replace_blocks(markdown, block)
    try:
        markdown = widget_blocks.replace_values(markdown, renderer)
    except Exception as exc:  # a value that cannot be computed stops the build, saying where
        raise SystemExit(f"{page.file.src_uri}: {exc}") from exc
    if widget_blocks.GALLERY_MARKER in markdown:
        markdown = markdown.replace(widget_blocks.GALLERY_MARKER, gallery_markdown(page, files, config))
    _state["pages"][page.file.src_uri] = rendered
    return markdown


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    for i, widget_html in enumerate(_state["pages"].get(page.file.src_uri, [])):
        html = html.replace(f"<p>KVLABWIDGET{i}KVLAB</p>", widget_html)
    # Markdown code blocks can be focused from the start, so a keyboard reaches and scrolls one
    # that overflows: material sets this itself when it mounts a block, which with content.lazy
    # (mkdocs.yml) is when the block first comes into view, and drops it there if the block
    # does not scroll. The widgets' templates do the same for their logs.
    return html.replace(HIGHLIGHT_CODE, HIGHLIGHT_CODE.replace("<code>", '<code tabindex="0">'))


BROWSER_LEAVES_OUT = {
    "memory/calibration.py"
}  # the calibration reads the test logs; checkpoint.py parses what a page fetched
HIGHLIGHT_CODE = '<div class="highlight"><pre><span></span><code>'  # pymdownx.highlight's code block


# ---------------------------------------------------------------------------- helpers


def kvlab_zip() -> bytes:
    """The kvlab package (sources, data files, and CPython 3.12 bytecode for it and for the
    numpy modules it imports), zipped reproducibly for Pyodide."""
    buf = io.BytesIO()
    package = PYCODE / "kvlab"
    # widgets/*_types.py hold the results' TypedDicts, imported only under TYPE_CHECKING, and memory/calibration.py
    # reads the repository's test logs: the browser needs neither
    paths = sorted(
        p
        for p in package.rglob("*")
        if p.is_file()
        and p.suffix in (".py", ".json")
        and not p.name.endswith("_types.py")
        and p.relative_to(package).as_posix() not in BROWSER_LEAVES_OUT
    )
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in paths:
            info = zipfile.ZipInfo(path.relative_to(PYCODE).as_posix(), date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, path.read_bytes())
        # the tiny model's tokenizer, so kvlab.core.tiny can tokenize in the browser too
        info = zipfile.ZipInfo("kvlab/data/tiny/tokenizer.json", date_time=(2020, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        zf.writestr(info, (MODEL_DIR / "tokenizer.json").read_bytes())
    sources = buf.getvalue()
    # and the bytecode Pyodide would otherwise compile on the reader's machine (bytecode.py)
    with (
        zipfile.ZipFile(buf, "a", zipfile.ZIP_DEFLATED) as zf,
        zipfile.ZipFile(io.BytesIO(bytecode.pyc_zip(sources))) as pyc,
    ):
        for info in pyc.infolist():
            zf.writestr(info, pyc.read(info))
    return buf.getvalue()


def manifest_js(zip_name: str, zip_bytes: bytes, snap: tuple[str, bytes] | None = None) -> str:
    """What the browser runtime loads, with sizes (for progress) and hashes; `snap`: the memory
    snapshot's path and bytes (http builds)."""
    files = {}
    for f in _state["vendored"]:
        data = f.src.read_bytes()
        files[f"vendor/{f.dest}"] = {"size": len(data), "sha256": vendor.sha256_of(data)}
    files[f"kvlab/{zip_name}"] = {"size": len(zip_bytes), "sha256": vendor.sha256_of(zip_bytes)}
    for name in MODEL_FILES:
        data = (MODEL_DIR / name).read_bytes()
        files[f"models/tiny/{name}"] = {"size": len(data), "sha256": vendor.sha256_of(data)}
    if snap:
        files[snap[0]] = {"size": len(snap[1]), "sha256": vendor.sha256_of(snap[1])}
    card = json.loads((MODEL_DIR / "card.json").read_text())
    manifest = {
        "pyodideVersion": vendor.PYODIDE_VERSION,
        "numpyWheel": vendor.NUMPY_WHEEL,
        "kvlabZip": f"kvlab/{zip_name}",
        "files": files,
        "model": {
            "onnx": "models/tiny/model.onnx",
            "tokenizer": "models/tiny/tokenizer.json",
            "config": card["config"],
            "params": card["params"],
        },
        "offline": offline_build(),
        "directoryUrls": not offline_build() and os.environ.get("KVLAB_DIRECTORY_URLS", "true") != "false",
    }
    if snap:
        # made with the trimmed standard library: the worker serves that one with it (snapshot.mjs)
        manifest["snapshot"] = {"file": snap[0], "stdlib": f"vendor/pyodide/{vendor.STDLIB_MIN}"}
    return "window.kvlabManifest = " + json.dumps(manifest, indent=1, sort_keys=True) + ";\n"


def payload_js(path: str, data: bytes) -> str:
    """A classic script that hands the runtime one binary file (offline build)."""
    b64 = base64.b64encode(data).decode("ascii")
    return f'kvlab.payloads.register("{path}", "{b64}");\n'


def embed_page_markdown(widget, site_url: str = "") -> str:
    """embed/<name>/: the widget alone, no site chrome, kept out of search; at its foot the fold
    "Embed this widget" with this page's own snippets, whole and compact, written here so they
    read with JavaScript off (embed.js fills them with the widget's settings as they are now)."""
    src = f"{site_url.rstrip('/')}/embed/{widget.name}/" if site_url else f"…/embed/{widget.name}/"
    title = html.escape(widget.title)
    return (
        "---\n"
        "template: embed.html\n"
        f"title: {json.dumps(widget.title)}\n"
        "search:\n  exclude: true\n"
        "hide:\n  - navigation\n  - toc\n"
        "---\n\n"
        f"<!-- widget: {widget.name} embed=true -->\n\n"
        f'<details class="kv-embed-this" data-embed-name="{widget.name}" data-embed-title="{title}" '
        f'data-embed-height="{widget.height}" data-embed-compact-height="{widget.compact_height}" markdown="0">\n'
        "<summary>Embed this widget</summary>\n"
        "<p>Paste this into your page: the whole widget (the script below it resizes the frame "
        f"to fit; where a page strips scripts the frame stays {widget.height} px tall, which fits it):</p>\n"
        f'<pre class="kv-snippet" data-embed-mode="full"><code>{widget_blocks.snippet_html(widget, src, site=site_url)}</code></pre>\n'
        "<p>Compact: the controls and the main result only"
        f" ({widget.compact_height} px tall without the script):</p>\n"
        f'<pre class="kv-snippet" data-embed-mode="compact"><code>'
        f"{widget_blocks.snippet_html(widget, src, compact=True, site=site_url)}</code></pre>\n"
        "</details>\n"
    )


def nav_paths(nav) -> list[str]:
    """The markdown files of mkdocs.yml's nav, in reading order.

    >>> nav_paths([{"Home": "index.md"}, {"Part": [{"A": "a.md"}, "b.md"]}, {"Out": "https://x.org"}])
    ['index.md', 'a.md', 'b.md']
    """
    paths = []
    for item in nav or []:
        entries = item.values() if isinstance(item, dict) else [item]
        for entry in entries:
            if isinstance(entry, list):
                paths += nav_paths(entry)
            elif isinstance(entry, str) and entry.endswith(".md"):
                paths.append(entry)
    return paths


def gallery_order(widgets: dict, nav: list[str], docs_dir: Path) -> list[str]:
    """Widget names in the site's reading order: by the nav position of the page that explains
    each one, then by where its first block sits on that page (a widget on no nav page goes last)."""

    def key(name: str) -> tuple:
        page = widgets[name].page
        where = nav.index(page) if page in nav else len(nav)
        source = docs_dir / page
        text = source.read_text(encoding="utf-8") if source.is_file() else ""
        first = next((m.start() for m in widget_blocks.BLOCK_RE.finditer(text) if m["name"] == name), len(text))
        return (where, first, name)

    return sorted(widgets, key=key)


def gallery_markdown(page: Page, files: Files, config: MkDocsConfig) -> str:
    """Every widget, in the site's reading order: what it shows, a live preview and the snippet to copy."""
    parts = []
    widgets = _state["widgets"]
    for name in gallery_order(widgets, nav_paths(config["nav"]), Path(config["docs_dir"])):
        widget = widgets[name]
        embed_file = files.get_file_from_path(f"embed/{name}.md")
        explained = files.get_file_from_path(widget.page)
        src = get_relative_url(embed_file.url, page.url)
        parts.append(
            f"## {widget.title}\n\n{widget.summary} Explained on "
            f"[{explained.page.title if explained.page and explained.page.title else widget.page}]"
            f"({get_relative_url(widget.page, page.file.src_uri)}).\n\n"
            f'<div class="kv-gallery-item" data-embed-name="{name}" data-embed-src="{src}" '
            f'data-embed-height="{widget.height}" data-embed-title="{html.escape(widget.title)}" '
            # the title and summary above are what a search should find, not 33 snippets of an <iframe>
            'data-search-exclude markdown="0">\n'
            # a facade, not an iframe: scrolling the gallery fetches nothing (an iframe per embed page
            # would fetch them all: bench/results/2026-12-02-runtime.md); with JavaScript the link opens the preview in place, without it, the page
            f'<p class="kv-gallery-preview"><a class="md-button" href="{src}" data-embed-preview '
            f'aria-label="Show the preview here: {html.escape(widget.title)}">Show the preview here</a> '
            '<span class="kv-gallery-note">(loads the widget’s page; nothing runs until you use it)</span></p>\n'
            f'<p class="kv-snippet-label">Snippet for your page:</p>\n'
            f'<pre class="kv-snippet"><code>{widget_blocks.snippet_html(widget, src)}</code></pre>\n'
            f"</div>\n"
        )
    return "\n".join(parts)
