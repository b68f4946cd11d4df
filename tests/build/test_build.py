"""The build: strict mkdocs, vendored runtimes verified, no other origins."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import build_py
import vendor  # sitebuild/ is on pytest's pythonpath (pyproject.toml)

ROOT = Path(__file__).resolve().parents[2]


def manifest(site: Path) -> dict:
    text = (site / "assets" / "kvlab" / "manifest.js").read_text()
    return json.loads(text.split("=", 1)[1].rstrip().rstrip(";"))


def test_every_page_is_built(built_site):
    for page in ["index.html", "attention/index.html", "404.html", "search/search_index.json"]:
        assert (built_site / page).is_file(), page


def test_vendored_files_exist_and_match_the_manifest(built_site):
    files = manifest(built_site)["files"]
    assert {
        "vendor/pyodide/pyodide.asm.wasm",
        "vendor/pyodide/python_stdlib.zip",
        f"vendor/pyodide/{vendor.NUMPY_WHEEL}",
        "vendor/ort/ort.iife.js",
        "vendor/plotly/plotly-basic.min.js",
    } <= set(files)
    for rel, meta in files.items():
        data = (built_site / "assets" / rel).read_bytes()
        assert len(data) == meta["size"], rel
        assert vendor.sha256_of(data) == meta["sha256"], rel


def test_numpy_wheel_in_the_site_is_the_one_pyodide_pins(built_site):
    lock = json.loads((built_site / "assets/vendor/pyodide/pyodide-lock.json").read_text())
    wheel = (built_site / "assets/vendor/pyodide" / vendor.NUMPY_WHEEL).read_bytes()
    assert vendor.sha256_of(wheel) == lock["packages"]["numpy"]["sha256"]


def test_plotly_is_the_basic_bundle(built_site):
    size = (built_site / "assets/vendor/plotly/plotly-basic.min.js").stat().st_size
    assert size < 1_300_000, "a bigger Plotly bundle than the basic one slipped in"


def test_no_stylesheet_restyles_the_page_on_materials_per_load_attribute(built_site):
    """material sets data-md-color-switching on <body> at every load; a rule on it makes
    Chromium restyle every element (sitebuild/kvlab_hooks.py: MATERIAL_RULES_DROPPED)."""
    sheets = list((built_site / "assets").rglob("*.css"))
    assert any(p.name.startswith("palette.") for p in sheets)
    assert [p.name for p in sheets if "data-md-color-switching" in p.read_text(encoding="utf-8")] == []
    assert ".kv-color-switching *" in (built_site / "assets/kvlab/kvlab.css").read_text(encoding="utf-8")


# The basic bundle draws scatter, bar and pie traces only; a widget asking Plotly for
# another trace type would draw nothing (heatmaps are kit.heatmap / kit.raster).
NOT_IN_BASIC = re.compile(r'type:\s*"(heatmap|contour|histogram\w*|box|violin|image|heatmapgl|scattergl)"')


def test_widgets_ask_plotly_only_for_basic_traces():
    found = [
        (p.parent.name, m.group(1))
        for p in (ROOT / "site_src").rglob("*.js")
        for m in NOT_IN_BASIC.finditer(p.read_text())
    ]
    assert found == []


def test_widgets_draw_charts_only_through_kit_plot():
    """kit.plot gives every chart the site's theme and draws it again on a scheme switch;
    a widget calling Plotly itself (or setting the theme's colours) would miss both."""
    direct = re.compile(
        r"Plotly\.(react|newPlot|relayout|restyle|update)\b|paper_bgcolor|getComputedStyle\(root\)\.color"
    )
    found = [
        (p.parent.name, m.group(0))
        for p in (ROOT / "site_src/widgets").glob("*/widget.js")
        for m in direct.finditer(p.read_text(encoding="utf-8"))
    ]
    assert found == []
    assert "kit.plot(" in (ROOT / "site_src/widgets/eviction/widget.js").read_text(encoding="utf-8")


def test_plotly_carries_the_compile_hint_and_is_otherwise_unchanged(built_site):
    served = (built_site / "assets/vendor/plotly/plotly-basic.min.js").read_bytes()
    assert served.startswith(b"//# allFunctionsCalledOnLoad\n")  # must be the script's first line for V8
    assert served[len(vendor.COMPILE_HINT) :] == vendor.PLOTLY_FILE.read_bytes()


def test_materials_bundle_carries_the_compile_hint_and_its_map_still_points_at_its_sources(built_site):
    import material

    original = next((Path(material.__file__).parent / "templates/assets/javascripts").glob("bundle.*.min.js"))
    served = (built_site / "assets/javascripts" / original.name).read_text(encoding="utf-8")
    assert served == vendor.COMPILE_HINT + original.read_text(encoding="utf-8")
    # the hint is one more generated line: the map starts with an empty one, the rest unchanged
    served_map = json.loads((built_site / "assets/javascripts" / (original.name + ".map")).read_text())
    original_map = json.loads(Path(str(original) + ".map").read_text())
    assert served_map["mappings"] == ";" + original_map["mappings"]
    assert served_map["sources"] == original_map["sources"]


def test_kvlab_css_has_only_child_scoped_has_selectors(built_site):
    """`:has()` with a descendant argument (`:root:has(.x) …`, as the embed layout once was)
    makes Chromium check the subject again whenever any element is inserted below it: on
    <html>, at every insertion on every page. `:has(> …)` only checks the parent."""
    css = (built_site / "assets/kvlab/kvlab.css").read_text(encoding="utf-8")
    found = re.findall(r":has\((.*?)\)", css)
    assert found, "the check would pass vacuously"
    assert [arg for arg in found if not arg.lstrip().startswith(">")] == []


def test_embed_layout_is_in_a_stylesheet_only_embed_pages_load(built_site):
    link = re.compile(r'<link rel="stylesheet" href="[^"]*assets/kvlab/embed\.css">')
    embeds = list((built_site / "embed").glob("*/index.html"))
    assert embeds and all(link.search(p.read_text(encoding="utf-8")) for p in embeds)
    pages = [p for p in built_site.rglob("index.html") if "embed" not in p.relative_to(built_site).parts[:1]]
    assert len(pages) >= 10 and not [p for p in pages if link.search(p.read_text(encoding="utf-8"))]
    # the gallery (embed/index.html) is a page of the site, not an embed
    assert not link.search((built_site / "embed/index.html").read_text(encoding="utf-8"))


def test_kvlab_zip_holds_the_package(built_site):
    import zipfile

    name = manifest(built_site)["kvlabZip"]
    with zipfile.ZipFile(built_site / "assets" / name) as zf:
        names = zf.namelist()
    assert "kvlab/__init__.py" in names and "kvlab/bridge.py" in names


def test_kvlab_zip_carries_the_browsers_bytecode(built_site):
    """Pyodide would compile kvlab's and numpy's sources on the reader's machine (a wait
    before the first widget is live, sitebuild/bytecode.py): the zip carries CPython 3.12
    unchecked-hash .pyc files (PEP 552) for every kvlab module and the numpy ones it imports,
    and nothing from the build machine's own Python."""
    import zipfile
    from pathlib import PurePosixPath

    with zipfile.ZipFile(built_site / "assets" / manifest(built_site)["kvlabZip"]) as zf:
        pycs = {n: zf.read(n) for n in zf.namelist() if n.endswith(".pyc")}
        sources = [n for n in zf.namelist() if n.endswith(".py")]
    assert pycs and all(".cpython-312.pyc" in n and "/__pycache__/" in n for n in pycs)
    assert not [n for n in sources if n.endswith("_types.py")]  # type-checking only: not shipped
    assert "kvlab/memory/calibration.py" not in sources and "kvlab/memory/engines.py" in sources  # repo tooling
    # 3.12's magic number (importlib/_bootstrap_external.py: 3531), flags 0b01: hash-based, unchecked
    assert {(p[:4], p[4:8]) for p in pycs.values()} == {((3531).to_bytes(2, "little") + b"\r\n", b"\x01\0\0\0")}
    cli = {"kvlab/cli.py", "kvlab/__main__.py"}  # `python -m kvlab`: never imported in the browser
    expected = {f"{p.parent}/__pycache__/{p.stem}.cpython-312.pyc" for p in map(PurePosixPath, set(sources) - cli)}
    assert expected <= set(pycs)
    assert {"numpy/__pycache__/__init__.cpython-312.pyc", "numpy/_core/__pycache__/numeric.cpython-312.pyc"} <= set(
        pycs
    )


def test_the_http_site_carries_a_snapshot_of_this_kvlab(built_site):
    """The started runtime's memory snapshot (sitebuild/snapshot.py): named by the manifest with the
    trimmed standard library it was made with, for this Pyodide, holding the files later imports
    read (numpy's side modules, kvlab's modules not imported yet) byte for byte as the build's own."""
    import gzip
    import zipfile

    m = manifest(built_site)
    assert m["snapshot"]["stdlib"] == f"vendor/pyodide/{vendor.STDLIB_MIN}" and m["snapshot"]["stdlib"] in m["files"]
    raw = gzip.decompress((built_site / "assets" / m["snapshot"]["file"]).read_bytes())
    assert raw[:8] == b"KVSNAP02"
    n = int.from_bytes(raw[8:12], "little")
    header = json.loads(raw[12 : 12 + n])
    assert header["pyodide"] == vendor.PYODIDE_VERSION and header["memory"] >= header["image"] > 10_000_000
    at = 12 + n + (8 - (12 + n) % 8) % 8 + header["image"]
    files = {}
    for path, size in header["files"]:
        files[path.split("site-packages/", 1)[1]] = raw[at : at + size]
        at += size
    assert at == len(raw)
    assert any(p.startswith("numpy/") and p.endswith(".so") for p in files)
    with zipfile.ZipFile(built_site / "assets" / m["kvlabZip"]) as zf:
        ours = {p: b for p, b in files.items() if p.startswith("kvlab/")}
        assert len(ours) > 20 and all(zf.read(p) == b for p, b in ours.items())
    assert "kvlab/__init__.py" not in files  # imported when the snapshot was made: its code is in the image


def test_the_search_index_holds_pages_not_widgets(built_site):
    """Widgets carry data-search-exclude: their controls, tables and build-time JSON are no search
    results, and they made the index every page fetches at load 44 KB gzipped (mkdocs-material's parser
    matches elements by tag, so a <figure> nested in a widget's <figure> ended the exclusion); nor are
    the embed gallery's 33 snippets (35 KB with both out)."""
    index = json.loads((built_site / "search/search_index.json").read_text())
    texts = {doc["location"]: doc["text"] for doc in index["docs"]}
    # a widget's build-time data, its status line, a gallery snippet
    widget_text = ('{"params"', "computed when the page was built", "&lt;iframe src=")
    leaked = {loc: t[:80] for loc, t in texts.items() if any(w in t for w in widget_text)}
    assert not leaked, leaked
    assert any("KV cache" in t for t in texts.values())  # the pages' own prose is still there


def test_widget_blocks_are_all_rendered(built_site):
    for html_file in built_site.rglob("*.html"):
        html = html_file.read_text()
        assert "KVLABWIDGET" not in html, html_file
        assert "<!-- widget:" not in html, html_file


def test_embed_pages_carry_kvlab_scripts_and_not_materials(built_site):
    """An embed has no search, navigation or palette toggle: material's bundle would only
    cost its start-up and the search index's download (site_src/overrides/embed.html)."""
    embeds = list((built_site / "embed").glob("*/index.html"))
    assert len(embeds) >= 10
    for html_path in embeds:
        html = html_path.read_text(encoding="utf-8")
        scripts = re.findall(r'<script src="([^"]+)"', html)
        assert not [s for s in scripts if "assets/javascripts/" in s], html_path
        for ours in ("kvlab/runtime.js", "kvlab/widgets.js", "kvlab-theme/palette.js", "kvlab-theme/scope.js"):
            assert any(s.endswith(ours) for s in scripts), (html_path, ours)
    site_page = (built_site / "memory/index.html").read_text(encoding="utf-8")
    assert re.search(r'<script src="[^"]*assets/javascripts/bundle\.[0-9a-f]+\.min\.js"', site_page)


def test_the_embed_gallery_follows_the_sites_reading_order(built_site):
    import widget_blocks

    nav = re.findall(r"^\s+- .*?:\s*([\w-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M)
    widgets = widget_blocks.discover_widgets()
    html = (built_site / "embed" / "index.html").read_text()
    names = re.findall(r'class="kv-gallery-item" data-embed-name="([\w-]+)"', html)
    assert sorted(names) == sorted(widgets)
    # by the nav position of the page that explains each widget, then by where it sits on that page
    pages = [widgets[n].page for n in names]
    assert [nav.index(p) for p in pages] == sorted(nav.index(p) for p in pages), pages
    for a, b in zip(names, names[1:]):
        if widgets[a].page == widgets[b].page:
            text = (ROOT / "site_src" / "pages" / widgets[a].page).read_text()
            first = {n: re.search(rf"^<!-- widget: {n}\s", text, re.M).start() for n in (a, b)}
            assert first[a] < first[b], (a, b)


RESOURCE_RE = re.compile(
    r"""<(?:script|img|iframe|source|audio|video)[^>]*\ssrc=["']([^"']+)|<link[^>]*\shref=["']([^"']+)"""
)


def test_no_page_loads_anything_from_another_origin(built_site):
    for html_file in built_site.rglob("*.html"):
        for m in RESOURCE_RE.finditer(html_file.read_text()):
            url = m.group(1) or m.group(2)
            if m.group(2) and ("canonical" in m.group(0) or "alternate" in m.group(0)):
                continue
            assert not re.match(r"^(https?:)?//", url), f"{html_file}: {url}"


def test_a_wrong_numpy_wheel_stops_the_build(tmp_path, monkeypatch):
    monkeypatch.setenv("KVLAB_CACHE", str(tmp_path))
    monkeypatch.setattr(vendor, "_from_cdn", lambda: b"not the real wheel")
    with pytest.raises(vendor.VendorError, match="Refusing to serve an unverified file"):
        vendor.ensure_numpy_wheel(log=lambda *_: None)
    assert not (tmp_path / vendor.NUMPY_WHEEL).exists()


def test_a_corrupt_cached_wheel_is_replaced(built_site, tmp_path, monkeypatch):
    # the session's build has put the verified wheel in the cache (a fresh cache has none before)
    good = (Path(vendor.cache_dir()) / vendor.NUMPY_WHEEL).read_bytes()
    monkeypatch.setenv("KVLAB_CACHE", str(tmp_path))
    (tmp_path / vendor.NUMPY_WHEEL).write_bytes(b"corrupt")
    monkeypatch.setattr(vendor, "_from_cdn", lambda: good)
    path = vendor.ensure_numpy_wheel(log=lambda *_: None)
    assert vendor.sha256_of(path.read_bytes()) == vendor.expected_numpy_sha256()


def test_help_explains_each_command():
    out = subprocess.run([sys.executable, str(ROOT / "build.py"), "--help"], capture_output=True, text=True).stdout
    for command in ("build", "serve", "zip", "test"):
        assert re.search(rf"^\s+{command}\s", out, re.M), f"--help does not explain {command}"


def test_missing_node_is_a_clear_message(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SystemExit, match="Node 20\\+ and npm are needed"):
        build_py().start_npm_ci()


def test_a_broken_widget_block_fails_the_build(tmp_path):
    sys.path.insert(0, str(ROOT / "pycode"))
    import widget_blocks

    with pytest.raises(ValueError, match="cannot read widget parameters"):
        widget_blocks.replace_blocks("<!-- widget: attention d=8 oops -->\n", lambda *a: "")
    renderer = widget_blocks.WidgetRenderer(widget_blocks.discover_widgets())
    with pytest.raises(ValueError, match="unknown widget"):
        renderer.render("nope", {}, uid="x", page_url="")


def test_every_code_block_that_can_scroll_is_focusable_from_the_start(built_site):
    """Material makes an overflowing code block focusable when it mounts it, which with
    `content.lazy` is only when the block first comes into view: a keyboard would tab past
    the ones below. So each carries tabindex in the HTML (material drops it where the block
    does not scroll); the gallery's snippets wrap and never scroll."""
    blocks = []
    for page in built_site.rglob("index.html"):
        html = page.read_text(encoding="utf-8")
        for m in re.finditer(r"<pre([^>]*)>(?:<span></span>)?<code([^>]*)>", html):
            if "kv-snippet" not in m[1]:
                blocks.append((page.relative_to(built_site).as_posix(), m[1], m[2]))
    assert len(blocks) >= 10
    missing = [b for b in blocks if "tabindex" not in b[1] + b[2]]
    assert missing == []


def test_no_stylesheet_restyles_a_subtree_on_any_class_change(built_site):
    """`table:not([class]) td > :first-child`: the `[class]` test above a bare `:first-child`
    made every class change restyle everything below the element (material's `no-js` → `js`
    on <html>: the whole page); so did `.no-js … > :nth-child(n)` (content tabs without
    scripts). The build drops material's three such rules."""
    bare = re.compile(r"(\[class\]|\.no-js)[^{},]*>\s*:(first|last|nth)-child")
    found = [p.name for p in (built_site / "assets").rglob("*.css") if bare.search(p.read_text(encoding="utf-8"))]
    assert found == []
