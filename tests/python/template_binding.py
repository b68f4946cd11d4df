"""The binder (kvlab.kit.bind) in Python, to check a widget's template against its function's result without a
browser (a helper of test_widget_binding and the widget tests, not a test module).

`render(widget)` renders the template as the build does (Jinja) and calls the widget's function with its
defaults; `check(tree, data, where, problems)` walks the tree as kit.bind does and lists where a bound path is not
in the result or where Jinja wrote something other than what the binder would write. ROWS_BUILT finds a widget JS
that builds table rows or list items of its own.
"""

from __future__ import annotations

import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def model_views(name: str, data: dict) -> dict:
    """What a model widget's template binds besides its result: the view it renders with its
    Python view function (the browser binds widget.js's JS twin of it)."""
    from kvlab.widgets import attention, generate, tokens

    if name == "model-attention":
        s = data["view"]
        return {"display": attention.model_attention_display(data, s["layer"], s["head"], s["query"])}
    fn = {
        "next-token": tokens.next_token_view,
        "generate": generate.generate_view,
        "model-race": generate.model_race_view,
    }
    return {"view": fn[name](data)} if name in fn else {}


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
BOUND = ("data-bind", "data-bind-links", "data-bind-attr", "data-bind-hidden", "data-bind-class", "data-bind-style")


class Node:
    def __init__(self, tag: str, attrs: dict, parent: Node | None):
        self.tag, self.attrs, self.parent, self.children = tag, attrs, parent, []

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def elements(self) -> list[Node]:
        return [c for c in self.children if isinstance(c, Node)]


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.at = Node("#root", {}, None)

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.at)
        self.at.children.append(node)
        if tag not in VOID:
            self.at = node

    def handle_endtag(self, tag):
        at = self.at
        while at is not None and at.tag != tag:
            at = at.parent
        if at is not None and at.parent is not None:
            self.at = at.parent

    def handle_data(self, data):
        self.at.children.append(data)


def parse(html: str) -> Node:
    tree = Tree()
    tree.feed(html)
    return tree.root


MISSING = object()


def get(data, path: str):
    """The binder's lookup (kit.get); MISSING where a name is not there, None through a None."""
    if path in (".", ""):
        return data
    v = data
    for key in path.split("."):
        if v is None:
            return None
        if isinstance(v, list):
            v = v[int(key)] if key.isdigit() and int(key) < len(v) else MISSING
        elif isinstance(v, dict):
            v = v.get(key, MISSING)
        else:
            v = MISSING
        if v is MISSING:
            return MISSING
    return v


def value(data, spec: str):
    """kit.js value(): a path's value, or for "path=text" whether its text is that text."""
    if "=" not in spec:
        return get(data, spec)
    path, want = spec.split("=", 1)
    v = get(data, path)
    return v if v is MISSING else shown(v) == want


def shown(v) -> str:
    """What kit.bind writes for a value (JS's String())."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def pairs(spec: str) -> list[tuple[str, str]]:
    return [tuple(p.split(":", 1)) for p in re.split(r"\s+(?=[\w-]+:)", spec.strip())]


def check(scope: Node, data, where: str, problems: list[str], *, own_scope: bool = False) -> None:
    """Walk scope as kit.bind does: its bound elements with data, each list's items with an item."""

    def visit(node: Node, top: bool) -> None:
        if not top and "data-item" in node.attrs:
            return  # an item of a list: checked with its item
        if not top and "data-bind-scope" in node.attrs:
            sub = get(data, node.attrs["data-bind-scope"])
            if sub is MISSING:
                problems.append(f"{where}: data-bind-scope={node.attrs['data-bind-scope']!r}: not in the result")
            else:
                check(node, sub, f"{where} {node.attrs['data-bind-scope']}", problems, own_scope=True)
            return
        if node.tag == "template":
            return
        a = node.attrs
        for name in BOUND:
            if name not in a:
                continue
            specs = (
                pairs(a[name]) if name in ("data-bind-attr", "data-bind-class", "data-bind-style") else [("", a[name])]
            )
            if name == "data-bind-hidden":
                specs = [("", p) for p in a[name].lstrip("!").split(" ")]
            values = []
            for key, spec in specs:
                path = spec.split(" ")[0]
                v = value(data, path)
                values.append(v)
                if v is MISSING:
                    problems.append(f"{where}: {name}={a[name]!r}: no {path!r} in the result")
                    continue
                if name == "data-bind" and node.text() != shown(v):
                    problems.append(
                        f"{where}: data-bind={path!r}: Jinja wrote {node.text()!r}, the binder writes {shown(v)!r}"
                    )
                data_attr = key.startswith(("data-", "aria-"))
                if name == "data-bind-attr" and v is None and key in a:
                    problems.append(f"{where}: {key} from {path!r}: the binder removes it (null), Jinja wrote it")
                if (
                    name == "data-bind-attr"
                    and v is not None
                    and (data_attr or v not in (False, True))
                    and a.get(key) != shown(v)
                ):
                    problems.append(
                        f"{where}: {key} from {path!r}: Jinja wrote {a.get(key)!r}, the binder {shown(v)!r}"
                    )
                if name == "data-bind-attr" and not data_attr and v in (None, False, True) and (key in a) != bool(v):
                    problems.append(f"{where}: {key} from {path!r}: Jinja's {key} does not follow {v!r}")
            if name == "data-bind-hidden" and MISSING not in values:
                hide = not any(values)
                if ("hidden" in a) != (not hide if a[name].startswith("!") else hide):
                    problems.append(f"{where}: data-bind-hidden={a[name]!r}: Jinja's hidden does not follow the value")
        kids = node.elements()
        for i, child in enumerate(kids):
            if child.tag == "template" and "data-each" in child.attrs:
                path = child.attrs["data-each"]
                items = get(data, path)
                if items is MISSING or not isinstance(items, list):
                    problems.append(f"{where}: data-each={path!r}: not a list in the result")
                    continue
                roots = child.elements()
                if len(roots) != 1 or "data-item" not in roots[0].attrs:
                    problems.append(f"{where}: data-each={path!r}: the row needs one root element with data-item")
                rendered = []
                for sib in kids[i + 1 :]:
                    if "data-item" not in sib.attrs:
                        break
                    rendered.append(sib)
                if len(rendered) != len(items):
                    problems.append(
                        f"{where}: data-each={path!r}: Jinja wrote {len(rendered)} rows for {len(items)} items"
                    )
                for j, (row, item) in enumerate(zip(rendered, items)):
                    check(row, item, f"{where} {path}[{j}]", problems, own_scope=True)
            else:
                visit(child, False)

    visit(scope, own_scope)


def render(name: str):
    """The widget's template as the build renders it (parsed), and the data the binder fills it from."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from sitebuild.widget_blocks import WidgetRenderer, discover_widgets

    widgets = discover_widgets()
    renderer = WidgetRenderer(widgets)
    import kvlab

    data = json.loads(json.dumps(getattr(kvlab, widgets[name].function)()))
    html = renderer.render(name, {}, uid="w", page_url="/")
    return parse(html), {**data, **json.loads(json.dumps(model_views(name, data)))}


ROWS_BUILT = re.compile(
    r"""createElement\(\s*["'`](tr|td|th|li)["'`]|\bel\(\s*["'`](tr|td|th|li)["'`]|fillRows\(|insertRow\(|insertCell\("""
)
