"""Embed pages' heights: every widget's embed page, whole and compact (`?compact=1`), at 700 and
375 px wide, before it is live (the build-time figure) and live (after "Make it live"), and the
iframe heights the snippets declare (widget.json "height" for whole, sitebuild/embed_heights.json
for compact). tests/browser/test_embed_heights.py checks that every embed page fits its declared
height at 700 px wide; this script measures what that height must be.

    python build.py build --site-dir /tmp/site        # a build whose site_url is the served one
    (cd /tmp/site && python3 -m http.server 8791 &)
    .venv/bin/python bench/embed_heights.py --site http://127.0.0.1:8791/
    .venv/bin/python bench/embed_heights.py --widgets qkv,serving --modes compact --no-live
    .venv/bin/python bench/embed_heights.py --write     # update the declared heights

Heights are the document's scrollHeight in a viewport 150 px tall (so the page's own height, not
the viewport's). Live: the page is loaded at the first width, made live, measured, then the
viewport is resized to each other width and measured again (no reload: the runtime starts once per
page). "scroll" lists the widths at which something inside the widget scrolls sideways (a table or
chart wider than its box) or the page itself is wider than the viewport.

--write sets a declared height to the needed one (the larger of static and live at 700 px, plus
--margin, rounded up to 10; a compact need within 500 px is written as at most 500) where the
declared one is too small, more than --slack px too big, or (compact) over 500 where 500 now
does; whole heights only for the widgets measured whole (--modes compact writes compact only).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_site import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[1]
WIDGETS = ROOT / "site_src" / "widgets"
COMPACT_FILE = ROOT / "sitebuild" / "embed_heights.json"
QUERY = {"full": "", "compact": "?compact=1"}

# sideways scrolling: the page, or a box inside the widget that scrolls (overflow auto/scroll)
SCROLLS = """(name) => {
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth + 1) return "page";
  const root = document.querySelector(`[data-widget="${name}"]`);
  for (const el of root.querySelectorAll("*")) {
    if (!el.offsetParent || el.scrollWidth <= el.clientWidth + 1) continue;
    const o = getComputedStyle(el).overflowX;
    if (o === "auto" || o === "scroll") return el.className.split(" ")[0] || el.tagName.toLowerCase();
  }
  return "";
}"""


def widget_names() -> list[str]:
    return sorted(p.parent.name for p in WIDGETS.glob("*/widget.json"))


def declared() -> dict[str, dict[str, int]]:
    compact = json.loads(COMPACT_FILE.read_text())["compact"]
    out = {}
    for name in widget_names():
        full = json.loads((WIDGETS / name / "widget.json").read_text())["height"]
        out[name] = {"full": full, "compact": compact.get(name, full)}
    return out


def measure(page, site: str, name: str, mode: str, widths: list[int], live: bool, timeout_ms: int) -> dict:
    """{"static": {w: h}, "live": {w: h or error}, "scroll": {w: what}} for one embed page."""
    from playwright.sync_api import expect

    row = {"static": {}, "live": {}, "scroll": {}}

    def at(width: int, kind: str, wait_ms: int) -> None:
        page.set_viewport_size({"width": width, "height": 150})
        page.wait_for_timeout(wait_ms)
        row[kind][width] = page.evaluate("document.documentElement.scrollHeight")
        what = page.evaluate(SCROLLS, name)
        if what:
            row["scroll"][width] = what

    page.set_viewport_size({"width": widths[0], "height": 150})
    page.goto(f"{site}embed/{name}/{QUERY[mode]}")
    root = page.locator(f'[data-widget="{name}"]')
    expect(root).to_have_attribute("data-mounted", "true")
    for width in widths:
        at(width, "static", 200)
    if not live:
        return row
    page.set_viewport_size({"width": widths[0], "height": 150})
    try:
        button = root.locator(".kv-live-button")
        if button.count() == 0:
            raise RuntimeError("no live button")
        button.click()
        expect(root).to_have_attribute("data-state", "ready", timeout=timeout_ms)
        page.wait_for_timeout(1500)  # charts drawn after the result
        for width in widths:
            at(width, "live", 1000)
    except Exception as e:  # a widget that cannot go live here: reported, not fatal
        for width in widths:
            row["live"].setdefault(width, f"ERR {type(e).__name__}")
    return row


def tallest(row: dict, width: int) -> int:
    """The taller of static and live at `width`."""
    return max(v for v in (row["static"].get(width), row["live"].get(width)) if isinstance(v, int))


def need(row: dict, width: int, margin: int) -> int:
    """The declared height this row needs at `width`: the tallest, plus margin, rounded up to 10."""
    return int(math.ceil((tallest(row, width) + margin) / 10) * 10)


def write(results: dict, before: dict, width: int, margin: int, slack: int) -> list[str]:
    changes = []
    compact = json.loads(COMPACT_FILE.read_text())["compact"]
    for name, modes in results.items():
        for mode, row in modes.items():
            h = need(row, width, margin)
            if mode == "compact" and h > 500 and tallest(row, width) <= 500 - 8:
                h = 500  # fits 500 with a smaller margin: keep the 700 x 500 promise
            old = before[name][mode]
            fits_now = mode == "compact" and old > 500 >= h  # a compact embed that fits 500 now says so
            if old >= h and old - h <= slack and not fits_now:
                continue
            changes.append(f"{name} {mode}: {old} -> {h}")
            if mode == "compact":
                compact[name] = h
            else:
                path = WIDGETS / name / "widget.json"
                text = path.read_text()
                path.write_text(re.sub(r'("height":\s*)\d+', rf"\g<1>{h}", text, count=1))
    COMPACT_FILE.write_text(json.dumps({"compact": dict(sorted(compact.items()))}, indent=1) + "\n")
    return changes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", default="http://127.0.0.1:8791/", help="the served build (its site_url)")
    ap.add_argument("--widgets", help="comma-separated names (default: every widget)")
    ap.add_argument(
        "--widths", default="700,375", help="comma-separated viewport widths; the first is the declared one's"
    )
    ap.add_argument("--modes", default="full,compact", help="full, compact or both")
    ap.add_argument("--no-live", action="store_true", help="static heights only (no runtime download)")
    ap.add_argument("--timeout", type=int, default=180, help="seconds to wait for a widget to go live")
    ap.add_argument("--margin", type=int, default=16, help="px added to the measured height before rounding")
    ap.add_argument("--slack", type=int, default=30, help="px a declared height may exceed the need unchanged")
    ap.add_argument("--json", type=Path, help="also write the measurements here")
    ap.add_argument("--load", type=Path, help="measure nothing: use a --json file of an earlier run (e.g. to --write)")
    ap.add_argument("--write", action="store_true", help="update sitebuild/embed_heights.json and widget.json heights")
    args = ap.parse_args()
    site = args.site if args.site.endswith("/") else args.site + "/"
    names = args.widgets.split(",") if args.widgets else widget_names()
    unknown = set(names) - set(widget_names())
    if unknown:
        ap.error(f"no such widget: {', '.join(sorted(unknown))}")
    widths = [int(w) for w in args.widths.split(",")]
    modes = [m for m in args.modes.split(",") if m]
    before = declared()

    results: dict[str, dict[str, dict]] = {}
    cols = [f"{kind} {w}" for kind in ("static", "live") for w in widths]
    print(f"{'widget':16} {'mode':8} {'declared':>8} " + " ".join(f"{c:>11}" for c in cols) + f" {'needs':>6}  scroll")

    def show(name: str, mode: str, row: dict) -> None:
        results.setdefault(name, {})[mode] = row
        cells = [row[kind].get(w, "") for kind in ("static", "live") for w in widths]
        scroll = " ".join(f"{w}:{what}" for w, what in row["scroll"].items())
        print(
            f"{name:16} {mode:8} {before[name][mode]:>8} "
            + " ".join(f"{str(c):>11}" for c in cells)
            + f" {need(row, widths[0], args.margin):>6}  {scroll}",
            flush=True,
        )

    if args.load:
        loaded = json.loads(args.load.read_text())
        for name in names:
            for mode in modes:
                if mode in loaded.get(name, {}):
                    row = loaded[name][mode]
                    show(name, mode, {k: {int(w): v for w, v in row[k].items()} for k in ("static", "live", "scroll")})
    else:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": widths[0], "height": 150})
            page = context.new_page()
            for name in names:
                for mode in modes:
                    show(name, mode, measure(page, site, name, mode, widths, not args.no_live, args.timeout * 1000))
            browser.close()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    over = sorted(n for n, m in results.items() if "compact" in m and tallest(m["compact"], widths[0]) > 500 - 8)
    if over:
        print("compact over 500 px at", widths[0], ":", " ".join(over))
    if args.write:
        changes = write(results, before, widths[0], args.margin, args.slack)
        print("\n".join(changes) if changes else "declared heights unchanged")


if __name__ == "__main__":
    main()
