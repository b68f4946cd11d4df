"""Screenshots of the built site as a reader sees it: each page at 375 x 812 and 1280 x 800,
light and dark, for a person to open and judge (DEVELOPERS.md: look at what the reader sees).

    .venv/bin/python bench/screens.py site OUT [PAGE ...] [--full] [--act JS] [--widget NAME]

PAGE is a path under the site ("", "memory/", "kv-offload/"); none: every content page.
--full takes the whole page; otherwise the first screen (what the reader meets first).
--widget NAME scrolls to that widget and shoots its box. --act JS runs in the page first
(`root` is the widget's element when --widget is given), e.g. to type into a field.
Files: OUT/<page>-<width>-<light|dark>.png; the script prints the list.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_site import CHROMIUM, CHROMIUM_ARGS, serve

SIZES = [(375, 812), (1280, 800)]
SCHEMES = ["light", "dark"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("site", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("pages", nargs="*")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--widget")
    ap.add_argument("--act", help="JS run in the page before the shot; `root` is the widget")
    ap.add_argument("--wait-ms", type=int, default=600)
    args = ap.parse_args()
    pages = args.pages or sorted(
        p.parent.relative_to(args.site).as_posix() + "/"
        for p in args.site.glob("*/index.html")
        if p.parent.name not in ("embed", "assets", "search")
    ) + [""]
    args.out.mkdir(parents=True, exist_ok=True)
    server, base = serve(args.site)
    from playwright.sync_api import sync_playwright

    shots = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for width, height in SIZES:
            for scheme in SCHEMES:
                context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
                page = context.new_page()
                for path in pages:
                    page.goto(base + path)
                    page.wait_for_load_state("networkidle")
                    target = page.locator(f'[data-widget="{args.widget}"]').first if args.widget else None
                    if target is not None:
                        target.scroll_into_view_if_needed()
                    if args.act:
                        handle = target.element_handle() if target is not None else None
                        page.evaluate(f"async (root) => {{ {args.act} }}", handle)
                    page.wait_for_timeout(args.wait_ms)
                    name = (path.strip("/").replace("/", "-") or "home") + f"-{width}-{scheme}.png"
                    file = args.out / name
                    if target is not None:
                        target.screenshot(path=str(file))
                    else:
                        page.screenshot(path=str(file), full_page=args.full)
                    shots.append(file)
                context.close()
        browser.close()
    server.shutdown()
    print("\n".join(str(s) for s in shots))


if __name__ == "__main__":
    main()
