"""Widget blocks in markdown → HTML that already holds the build-time figure.

A page places a widget with one line of its own:

    <!-- widget: attention d=8 temperature=1.0 -->

(an HTML comment, so the markdown still reads well on GitHub). The block
calls the widget's kvlab function with those parameters, renders the widget's
jinja2 template with the result, and wraps it in the common frame (title,
status line, controls hidden until JS mounts, link to its embed page).

A widget is a folder site_src/widgets/<name>/ with
    widget.json    title, kvlab function, page it lives on, embed height (and
                   embed_heights.json beside this file: its compact embed's height)
    template.html  the markup + static fallback, rendered from `data` (and `limits`:
                   the controls' min, max, step and choices, from the function's Spec)
    widget.js      behaviour: kvlab.register("<name>", {mount(root, ctx)})
    widget.css     optional styles
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

WIDGETS_DIR = Path(__file__).resolve().parents[1] / "site_src" / "widgets"
# Each widget's compact embed height (embed/<name>/?compact=1), in CSS px: the iframe height its
# compact snippet declares, at which the compact page shows without inner scrolling at 700 px wide
# (tests/browser/test_embed_heights.py measures every embed page, full and compact, against it).
COMPACT_HEIGHTS = Path(__file__).resolve().parent / "embed_heights.json"
GALLERY_MARKER = "<!-- widget-gallery -->"
BLOCK_RE = re.compile(r"^<!--\s*widget:\s*(?P<name>[a-z][a-z0-9_-]*)(?P<params>[^>]*?)\s*-->\s*$", re.M)
PARAM_RE = re.compile(r"(?P<key>[a-z_][a-z0-9_]*)=(?P<value>\"[^\"]*\"|\S+)")


# A web address inside a sentence: it ends before a closing bracket or a trailing full stop.
# The runtime's kvlab.kit.linked (site_src/runtime/kit.js) uses the same pattern.
URL_RE = re.compile(r"https?://[^\s()<>\"]+[^\s()<>\".,;:]")


def link_name(url: str) -> str:
    """What a reader sees for a link: the site's name.

    >>> link_name("https://www.nvidia.com/en-us/data-center/h100/")
    'nvidia.com'
    """
    host = url.split("://", 1)[1].split("/", 1)[0]
    return host.removeprefix("www.")


def linked(text: str):
    """Text with every web address turned into a link named by its site (escaped, as Markup).

    >>> str(linked("peak (source: https://www.nvidia.com/h100/ (spec)). <b>"))
    'peak (source: <a href="https://www.nvidia.com/h100/" rel="noopener">nvidia.com</a> (spec)). &lt;b&gt;'
    """
    escape = jinja2.utils.markupsafe.escape
    text = str(text)
    out, last = [], 0
    for m in URL_RE.finditer(text):
        out.append(str(escape(text[last : m.start()])))
        out.append(f'<a href="{escape(m.group(0))}" rel="noopener">{escape(link_name(m.group(0)))}</a>')
        last = m.end()
    out.append(str(escape(text[last:])))
    return jinja2.utils.markupsafe.Markup("".join(out))


@dataclass
class Widget:
    name: str
    title: str
    function: str
    page: str  # the markdown page that explains it, relative to docs_dir
    height: int  # a sensible iframe height for embeds, in CSS pixels
    summary: str = ""
    runtimes: tuple = ("python",)  # what going live downloads: "python" and/or "model"
    folder: Path = field(default_factory=Path)

    @property
    def compact_height(self) -> int:
        """The compact embed's iframe height (embed_heights.json; the full height where it has none)."""
        heights = json.loads(COMPACT_HEIGHTS.read_text(encoding="utf-8")) if COMPACT_HEIGHTS.is_file() else {}
        return int(heights.get("compact", {}).get(self.name, self.height))

    @property
    def js(self) -> str:
        return (self.folder / "widget.js").read_text(encoding="utf-8")

    @property
    def files(self) -> list[str]:
        """Site assets its function fetches beyond the runtimes (kvlab.bridge.BROWSER_FILES), so
        that "Make it live" can say what going live downloads in all."""
        from kvlab.bridge import BROWSER_FILES

        return sorted(BROWSER_FILES.get(self.function, {}).get("files", {}))

    @property
    def css(self) -> str:
        path = self.folder / "widget.css"
        return path.read_text(encoding="utf-8") if path.is_file() else ""


def discover_widgets() -> dict[str, Widget]:
    """Every folder under site_src/widgets/ with a widget.json."""
    widgets = {}
    for meta_path in sorted(WIDGETS_DIR.glob("*/widget.json")):
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        name = meta_path.parent.name
        missing = [f for f in ("template.html", "widget.js") if not (meta_path.parent / f).is_file()]
        if missing:
            raise ValueError(f"widget {name!r} (site_src/widgets/{name}/) lacks {', '.join(missing)}")
        widgets[name] = Widget(name=name, folder=meta_path.parent, **meta)
    return widgets


def parse_params(text: str) -> dict:
    """`d=8 temperature=0.5 causal=false name="a b"` → typed kwargs.

    >>> parse_params(' d=8 temperature=0.5 causal=false name="a b"')
    {'d': 8, 'temperature': 0.5, 'causal': False, 'name': 'a b'}
    """
    params = {}
    leftover = PARAM_RE.sub("", text).strip()
    if leftover:
        raise ValueError(f"cannot read widget parameters near {leftover!r} (use key=value)")
    for m in PARAM_RE.finditer(text):
        params[m["key"]] = _typed(m["value"])
    return params


def _typed(value: str):
    if value.startswith('"'):
        return value[1:-1]
    if value in ("true", "false"):
        return value == "true"
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


class Blank:
    """The item a list's <template data-each> row is rendered with: every field of it is
    empty, so the row's markup is written once in the widget's template (the `each`
    macro in _bind.html) and the browser's binder fills its clones (kvlab.kit.bind).

    >>> str(Blank().a.b[0]), "{:,}".format(Blank()), bool(Blank()), list(Blank())
    ('', '', False, [])
    """

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __getitem__(self, key):
        return self

    def __str__(self) -> str:
        return ""

    def __html__(self) -> str:
        return ""

    def __format__(self, spec: str) -> str:
        return ""

    def __bool__(self) -> bool:
        return False

    def __iter__(self):
        return iter(())

    def __len__(self) -> int:
        return 0


class WidgetRenderer:
    """Renders widget blocks; counts instances so each gets a unique id on its page."""

    def __init__(self, widgets: dict[str, Widget]):
        self.widgets = widgets
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(WIDGETS_DIR)),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["fmt"] = lambda x, n=3: f"{x:.{n}f}"
        self.env.filters["links"] = linked
        self.env.globals["blank"] = Blank()
        # each call's result, by function and parameters: a widget's content page and its embed
        # page show the same call, and a widget function is deterministic (its page is its result)
        self.results: dict[tuple[str, str], dict] = {}

    def render_template(self, name: str, data: dict, params: dict, *, uid: str) -> str:
        """The widget's own template, filled from `data` (its function's result for `params`)."""
        import kvlab  # imported late: the hook puts pycode/ on sys.path first

        widget = self.widgets[name]
        # the controls' min, max, step and choices: the Spec beside the function (kvlab.inputs.takes)
        spec = getattr(getattr(kvlab, widget.function), "inputs", None)
        return self.env.get_template(f"{name}/template.html").render(
            data=data, params=params, widget=widget, uid=uid, kvlab=kvlab, limits=spec.limits() if spec else {}
        )

    def call(self, function: str, params: dict) -> dict:
        """kvlab.<function>(**params), once per build for the same parameters."""
        import kvlab  # imported late: the hook puts pycode/ on sys.path first

        if function not in kvlab.__all__:
            raise ValueError(f"{function!r} is not a kvlab function")
        key = (function, json.dumps(params, sort_keys=True))
        if key not in self.results:
            self.results[key] = getattr(kvlab, function)(**params)
        return self.results[key]

    def render(self, name: str, params: dict, *, uid: str, page_url: str, embed: bool = False) -> str:
        widget = self.widgets.get(name)
        if widget is None:
            raise ValueError(f"unknown widget {name!r}; known: {', '.join(sorted(self.widgets))}")
        data = self.call(widget.function, params)
        inner = self.render_template(name, data, params, uid=uid)
        return self.env.get_template("_frame.html").render(
            widget=widget,
            uid=uid,
            inner=jinja2.utils.markupsafe.Markup(inner),
            data_json=jinja2.utils.markupsafe.Markup(escape_json_for_html(json.dumps(data, separators=(",", ":")))),
            params_json=jinja2.utils.markupsafe.Markup(escape_json_for_html(json.dumps(params, separators=(",", ":")))),
            page_url=page_url,
            embed=embed,
        )


# A number in a page's prose, computed: <!-- value: race_figure n=100 path=view.totals.no_cache -->
# is replaced by that function's result at that path (the widget's own function and parameters,
# so the prose says what the widget shows; the teacher's page's answers are written this way).
VALUE_RE = re.compile(r"<!--\s*value:\s*(?P<fn>[a-z][a-z0-9_]*)(?P<params>[^>]*?)\s*-->")


def replace_values(markdown: str, renderer: WidgetRenderer) -> str:
    """Each value placeholder replaced by its computed text (HTML-escaped); an unknown function or
    path stops the build."""
    import html

    def sub(m: re.Match) -> str:
        params = parse_params(m["params"])
        path = params.pop("path", None)
        if not path:
            raise ValueError(f"value {m[0]!r}: no path=")
        value = renderer.call(m["fn"], params)
        for key in str(path).split("."):
            try:
                value = value[int(key)] if isinstance(value, list) else value[key]
            except (KeyError, IndexError, ValueError, TypeError):
                raise ValueError(f"value {m[0]!r}: no {key!r} in {m['fn']}'s result at {path}") from None
        if isinstance(value, (dict, list)):
            raise ValueError(f"value {m[0]!r}: {path} is not a single value")
        return f'<span class="kv-value">{html.escape(str(value))}</span>'

    return VALUE_RE.sub(sub, markdown)


def replace_blocks(markdown: str, on_block) -> str:
    """Replace each widget block line with on_block(name, params, index)."""
    counter = iter(range(10_000))

    def sub(m: re.Match) -> str:
        return on_block(m["name"], parse_params(m["params"]), next(counter))

    return BLOCK_RE.sub(sub, markdown)


def escape_json_for_html(text: str) -> str:
    """JSON as the text of a <template>: no markup characters at all (JSON's
    own \\u escapes), so the browser parses it as one text node.

    Not a <script type=application/json>: mkdocs-material's instant navigation
    re-creates inline scripts without their attributes, and would run the JSON."""
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def snippet_html(widget: Widget, src: str, *, compact: bool = False, site: str = "") -> str:
    """The iframe snippet, HTML-escaped for a <code> block: the whole widget, or (compact) its
    controls and main result, each at the height it shows without inner scrolling. `site`: the
    site's address (mkdocs' site_url), for the host script's; without it "…" stands for it. The
    runtime rewrites the snippet with absolute URLs for wherever the site is served
    (kvlab.embedSnippet: the same text).

    >>> w = Widget(name="w", title="A & B", function="f", page="p.md", height=600)
    >>> print(html.unescape(snippet_html(w, "https://x.org/embed/w/", site="https://x.org/")))
    <iframe src="https://x.org/embed/w/" title="A &amp; B" loading="lazy" width="100%" height="600" style="border:0;max-width:100%" data-kvlab-embed></iframe>
    <script src="https://x.org/assets/kvlab/embed-host.js" defer></script>
    """
    height = widget.compact_height if compact else widget.height
    src = src + ("&" if "?" in src else "?") + "compact=1" if compact else src
    host = (site.rstrip("/") + "/" if site else "…/") + "assets/kvlab/embed-host.js"
    text = (
        f'<iframe src="{attr(src)}" title="{attr(widget.title)}" loading="lazy" width="100%" '
        f'height="{height}" style="border:0;max-width:100%" data-kvlab-embed></iframe>\n'
        f'<script src="{attr(host)}" defer></script>'
    )
    return html.escape(text)


def attr(text: str) -> str:
    """An attribute's value, escaped as kvlab.embedSnippet escapes it (embed.js: escapeAttr)."""
    return str(text).replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
