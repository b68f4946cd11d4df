"""A widget's stylesheet styles its own widget and no other.

Every widget.css is concatenated into the one kvlab.css every page loads (after
site_src/styles/kvlab.css, in folder order), so an unscoped rule in one widget's file
styles every widget whose markup carries its classes: generate's and prefix-cache's
`white-space: nowrap` and flex rows once broke gpu-fit's legend. The rule checked here:
each selector of site_src/widgets/<name>/widget.css is scoped to <name>, either

- by `[data-widget="<name>"]` (or `:is([data-widget="a"], [data-widget="<name>"], ...)`
  listing widgets that share the rule deliberately), or
- by a kv- class that no other widget's markup (template.html, widget.js, the shared
  partials it uses) writes.

Styles several widgets share belong in the site-wide stylesheet (site_src/styles/kvlab.css).
No browser: a small CSS parser (comments, strings, at-rules, `:is()`/`:where()`
alternatives, `:not()` left out) and the markup's kv- words.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WIDGETS = ROOT / "site_src" / "widgets"
# at-rules whose block holds style rules; any other at-rule's block (@keyframes, @font-face, ...) holds none
GROUPING_AT_RULES = {"media", "supports", "container", "layer", "document", "scope"}
ALTERNATIVES = re.compile(r":(?:is|where|matches|-webkit-any|-moz-any)\(", re.I)
NOT = re.compile(r":not\(", re.I)
SCOPE = re.compile(r"""\[\s*data-widget\s*=\s*(["']?)([\w-]+)\1\s*(?:[is]\s*)?\]""")
CLASS = re.compile(r"\.(kv-[\w-]+)")
# the markup's kv- words: class names, also built ones (`kv-seg-{{ name }}`, `kv-gen-${kind}`,
# kit.raster's `prefix: "kv-ev"`) as prefixes
WORD = re.compile(r"kv-[\w-]*[\w]|kv-(?=\{\{|\$\{)")
PREFIX = re.compile(r"""(kv-[\w-]*)(?:\{\{|\$\{|["']\s*\+)|prefix:\s*["'](kv-[\w-]+)["']""")
PARTIAL = re.compile(r"""["'](_[\w-]+\.html)["']""")


def strip_comments(css: str) -> str:
    out, i = [], 0
    while i < len(css):
        if css.startswith("/*", i):
            end = css.find("*/", i + 2)
            if end < 0:
                raise ValueError("unclosed comment")
            # blanks of the same length, newlines kept: offsets (and so line numbers) stay true
            out.append(re.sub(r"[^\n]", " ", css[i : end + 2]))
            i = end + 2
        elif css[i] in "\"'":
            end = skip_string(css, i)
            out.append(css[i:end])
            i = end
        else:
            out.append(css[i])
            i += 1
    return "".join(out)


def skip_string(text: str, i: int) -> int:
    """The index just past the string that starts at text[i]."""
    quote, i = text[i], i + 1
    while i < len(text) and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    if i >= len(text):
        raise ValueError(f"unclosed string: {text[:80]!r}")
    return i + 1


def scan_to(text: str, i: int, stops: str) -> int:
    """The index of the first of `stops` at text[i:] outside strings, parentheses and brackets."""
    depth = 0
    while i < len(text):
        c = text[i]
        if c in "\"'":
            i = skip_string(text, i)
            continue
        if depth == 0 and c in stops:
            return i
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        i += 1
    return i


def block_end(text: str, i: int) -> int:
    """text[i] is "{": the index of its matching "}"."""
    depth = 0
    while i < len(text):
        c = text[i]
        if c in "\"'":
            i = skip_string(text, i)
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError("unclosed block")


def split_top(text: str, sep: str = ",") -> list[str]:
    return [part for _at, part in split_top_at(text, sep)]


def split_top_at(text: str, sep: str = ",") -> list[tuple[int, str]]:
    """(offset in text, part) for each part of text split at its top-level `sep`."""
    parts, i, start = [], 0, 0
    while True:
        j = scan_to(text, i, sep)
        part = text[start:j]
        if part.strip():
            parts.append((start + len(part) - len(part.lstrip()), part.strip()))
        if j >= len(text):
            return parts
        i = start = j + 1


def selectors(css: str) -> list[str]:
    """Every selector (a selector list split at its top-level commas) of every style rule."""
    return [sel for _line, sel in selectors_at(css)]


def selectors_at(css: str) -> list[tuple[int, str]]:
    """(line, selector) for every selector of every style rule; lines count from 1."""
    css = strip_comments(css)
    return [(css.count("\n", 0, at) + 1, sel) for at, sel in _selectors(css, 0)]


def _selectors(css: str, base: int) -> list[tuple[int, str]]:
    """(offset, selector) in a comment-free text that starts at offset `base` of the file."""
    out, i = [], 0
    while i < len(css):
        j = scan_to(css, i, "{;}")
        prelude = css[i:j].strip()
        if j >= len(css):
            if prelude:
                raise ValueError(f"rule without a block: {prelude!r}")
            break
        if css[j] != "{":
            if prelude and not prelude.startswith("@"):
                raise ValueError(f"stray text: {prelude!r}")
            i = j + 1
            continue
        end = block_end(css, j)
        body = css[j + 1 : end]
        if prelude.startswith("@"):
            name = re.match(r"@([\w-]+)", prelude).group(1).lower()
            if name in GROUPING_AT_RULES:
                out += _selectors(body, base + j + 1)
        else:
            if scan_to(body, 0, "{") < len(body):
                raise ValueError(f"nested rules are not read by this check: {prelude!r}")
            out += [(base + i + at, sel) for at, sel in split_top_at(css[i:j])]
        i = end + 1
    return out


def paren_end(text: str, i: int) -> int:
    """text[i - 1] is "(": the index of its matching ")"."""
    j = scan_to(text, i, ")")
    if j >= len(text):
        raise ValueError(f"unclosed parenthesis: {text!r}")
    return j


def alternatives(selector: str) -> list[str]:
    """The selector with each :is()/:where() replaced by one of its arguments, every combination."""
    m = ALTERNATIVES.search(selector)
    if not m:
        return [selector]
    end = paren_end(selector, m.end())
    out = []
    for arg in split_top(selector[m.end() : end]):
        out += alternatives(selector[: m.start()] + f" {arg} " + selector[end + 1 :])
    return out


def without_not(selector: str) -> str:
    """:not(...) matches what lacks its argument: its classes and scopes say nothing of where the rule applies."""
    while m := NOT.search(selector):
        selector = selector[: m.start()] + selector[paren_end(selector, m.end()) + 1 :]
    return selector


def notice_classes(js: str) -> set[str]:
    """`ctx.notice(text, "clamped")` writes a note of class `kv-clamped` (runtime/context.js: `kv-${key}`)."""
    found = set()
    for m in re.finditer(r"\bnotice\(", js):
        i = j = m.end()
        depth = 1
        while j < len(js) and depth:
            if js[j] in "\"'`":
                j = skip_string(js, j)
                continue
            depth += js[j] in "([{"
            depth -= js[j] in ")]}"
            j += 1
        key = re.search(r",\s*([\"'])([\w-]+)\1\s*$", js[i : j - 1])
        found.add(f"kv-{key[2] if key else 'main'}")
    return found


def words_in(texts: list[str]) -> tuple[set[str], set[str]]:
    words, prefixes = set(), set()
    for text in texts:
        words |= set(WORD.findall(text)) | notice_classes(text)
        prefixes |= {a or b for a, b in PREFIX.findall(text)}
    # "kv-" alone (`kv-{{ row }}`, `kv-${key}`) would claim every class: such classes are named elsewhere
    return words, {p for p in prefixes if len(p) > len("kv-")}


# what the page's runtime writes into every widget (the frame's notes, kit's heatmaps, controls)
RUNTIME = words_in([p.read_text(encoding="utf-8") for p in sorted((ROOT / "site_src" / "runtime").glob("*.js"))])


def markup_words(folder: Path) -> tuple[set[str], tuple[str, ...]]:
    """The kv- words a widget's markup writes (its files, the partials its template uses, the runtime) and built prefixes."""
    texts = [(folder / f).read_text(encoding="utf-8") for f in ("template.html", "widget.js") if (folder / f).exists()]
    partials = {"_frame.html"}  # the frame every widget is rendered in
    for text in texts:
        partials |= set(PARTIAL.findall(text))
    texts += [(WIDGETS / p).read_text(encoding="utf-8") for p in sorted(partials) if (WIDGETS / p).exists()]
    words, prefixes = words_in(texts)
    return words | RUNTIME[0], tuple(sorted(prefixes | RUNTIME[1]))


def uses(markup: tuple[set[str], tuple[str, ...]], cls: str) -> bool:
    words, prefixes = markup
    return cls in words or cls.startswith(prefixes)


def widget_folders() -> list[Path]:
    return sorted(p for p in WIDGETS.iterdir() if (p / "widget.json").exists())


MARKUP = {p.name: markup_words(p) for p in widget_folders()}


def shared_scope(selector: str, name: str) -> str:
    """`:is([data-widget="a"], [data-widget="<name>"])`, a list of widgets sharing a rule, reads as `<name>`'s scope."""
    out, i = [], 0
    while m := ALTERNATIVES.search(selector, i):
        end = paren_end(selector, m.end())
        args = split_top(selector[m.end() : end])
        if all(SCOPE.fullmatch(a) for a in args) and name in {SCOPE.fullmatch(a)[2] for a in args}:
            out.append(selector[i : m.start()] + f'[data-widget="{name}"]')
        else:
            out.append(selector[i : end + 1])
        i = end + 1
    return "".join(out) + selector[i:]


def leaks(name: str, css: str) -> list[tuple[str, str, list[str]]]:
    """(selector, why, widgets it can reach) for each selector of `name`'s css not scoped to `name`."""
    return [(sel, why, reach) for _line, sel, why, reach in leaks_at(name, css)]


def leaks_at(name: str, css: str) -> list[tuple[int, str, str, list[str]]]:
    """(line, selector, why, widgets it can reach) for each selector of `name`'s css not scoped to `name`."""
    others = [w for w in MARKUP if w != name]
    found = []
    for line, selector in selectors_at(css):
        whys, reach = [], set()
        for alt in alternatives(shared_scope(selector, name)):
            alt = without_not(alt)
            scopes = {m[1] for m in SCOPE.findall(alt)}
            if name in scopes:
                continue
            if scopes:
                whys.append(f"scoped to {', '.join(sorted(scopes))} only")
                reach |= scopes
                continue
            classes = set(CLASS.findall(alt))
            if not classes:
                whys.append("no kv- class and no [data-widget] scope")
                reach.add("every widget")
                continue
            if any(not any(uses(MARKUP[w], c) for w in others) for c in classes):
                continue  # a class of its own: no other widget writes it
            full = {w for w in others if all(uses(MARKUP[w], c) for c in classes)}
            whys.append(
                "its kv- classes are all in other widgets' markup"
                + ("" if full else " (no single one has them all yet)")
            )
            reach |= full or {w for w in others for c in classes if uses(MARKUP[w], c)}
        if whys:
            found.append((line, selector, "; ".join(dict.fromkeys(whys)), sorted(reach)))
    return found


def test_parser_reads_at_rules_comments_strings_and_alternatives():
    css = """/* a { } */ @media (max-width: 40em) { .a, .b:is(.c, [data-widget="x"] .d) { x: "}" } }
    @keyframes k { from { top: 0 } to { top: 1px } } .e::after { content: "{"; }"""
    assert selectors(css) == [".a", '.b:is(.c, [data-widget="x"] .d)', ".e::after"]
    assert alternatives('.b:is(.c, [data-widget="x"] .d) :where(p, q)') == [
        ".b .c   p ",
        ".b .c   q ",
        '.b [data-widget="x"] .d   p ',
        '.b [data-widget="x"] .d   q ',
    ]
    assert without_not(".a:not(.b:not(.c)) .d") == ".a .d"
    # line numbers survive comments, at-rules and selector lists over several lines
    assert selectors_at("/* one\ntwo */ .a,\n.b { x: 1 }\n@media print {\n  .c { }\n}\n") == [
        (2, ".a"),
        (3, ".b"),
        (5, ".c"),
    ]


def test_the_check_finds_a_leak():
    """The check itself can fail: rules like those that once broke gpu-fit's legend."""
    assert len(MARKUP) > 5 and "gpu-fit" in MARKUP
    css = '.kv-swatch { x: 1 } ul.kv-legend li { x: 1 } textarea { x: 1 } [data-widget="serving"] .kv-x { x: 1 }'
    found = {sel: reach for sel, _why, reach in leaks("prefix-cache", css)}
    assert "gpu-fit" in found[".kv-swatch"] and "gpu-fit" in found["ul.kv-legend li"]
    assert found["textarea"] == ["every widget"] and found['[data-widget="serving"] .kv-x'] == ["serving"]
    shared = ':is([data-widget="gpu-fit"], [data-widget="prefix-cache"]) .kv-swatch'
    assert (
        leaks("prefix-cache", f'[data-widget="prefix-cache"] .kv-swatch, {shared}, .kv-plot.kv-no-one-else {{ x: 1 }}')
        == []
    )
    assert [
        r for _s, _w, r in leaks("prefix-cache", ':is([data-widget="prefix-cache"], .kv-legend) .kv-swatch { x: 1 }')
    ] == [["context-shift", "eviction", "gpu-fit", "kv-memory", "prefix-blocks", "prefix-cases", "serving-sim"]]


@pytest.mark.parametrize("folder", [p for p in widget_folders() if (p / "widget.css").exists()], ids=lambda p: p.name)
def test_widget_css_is_scoped_to_its_widget(folder):
    css_path = folder / "widget.css"
    found = leaks_at(folder.name, css_path.read_text(encoding="utf-8"))
    where = css_path.relative_to(ROOT)
    lines = [
        f"  {where}:{line}: {sel}\n      {why}; it can style: {', '.join(reach)}" for line, sel, why, reach in found
    ]
    assert not found, (
        f'{where}: {len(found)} selector(s) not scoped to [data-widget="{folder.name}"]'
        " nor to a kv- class of its own (every widget.css is in the one kvlab.css of every page):\n"
        + "\n".join(lines)
        + "\nScope it, move a rule that styles another widget to that widget's widget.css, or move styles"
        " several widgets share to site_src/styles/kvlab.css."
    )
