"""The browser runtime, as a reader meets it, in headless Chromium.

Prints one table:
  bytes before intent   every page and embed loaded and scrolled, untouched: what it
                        fetched, gzip-compressed (what a gzip-serving host sends);
                        and whether any runtime file was among it
  first widget live     the first click on a Python widget until it shows live numbers
                        (timed in the page: the focus event to data-state="ready"),
                        against a bare page that loads Pyodide + numpy the usual way
                        (main thread) in the same browser: the ratio
  long tasks            main-thread long tasks (PerformanceObserver "longtask") summed
                        from that click until live; same for the first Generate
  second page live      after live on one page, a click on the footer's next link: from
                        the click event to its widget's data-state="ready", timed in the
                        page (instant navigation keeps the workers); clicked at once, and
                        clicked after a reader's 2 s pause (the page's idle work done)

    python build.py build --site-dir /tmp/site          # KVLAB_SITE_URL=http://127.0.0.1:8765/ for instant navigation
    .venv/bin/python bench/runtime.py --site /tmp/site  # --port 8765 (the port the site was built for), --reps N

Timings are medians over --reps fresh browser contexts; the machine's load is printed.
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import statistics
import sys
import time
from pathlib import Path

from local_site import CHROMIUM, CHROMIUM_ARGS, serve
from playwright.sync_api import sync_playwright

HEAVY = re.compile(
    r"/assets/(kvlab/worker\.js|kvlab/model\.js|kvlab/snapshot\.js|kvlab/kvlab-[0-9a-f]+\.zip|kvlab/python-[0-9a-f]+\.snap\.gz|vendor/pyodide/|vendor/ort/|models/)"
)

BARE_PAGE = """<!doctype html><meta charset="utf-8"><title>bare Pyodide</title>
<script src="assets/vendor/pyodide/pyodide.js"></script>
<script>
window.bare = (async () => {
  const t0 = performance.now();
  const py = await loadPyodide({indexURL: new URL("assets/vendor/pyodide/", location.href).href});
  await py.loadPackage("numpy");
  py.runPython("import numpy; numpy.arange(10).sum()");
  return performance.now() - t0;
})();
</script>
"""

LONGTASKS_JS = """() => {
  window.benchLong = [];
  new PerformanceObserver((list) => list.getEntries().forEach((e) => window.benchLong.push([e.startTime, e.duration])))
    .observe({type: "longtask", buffered: true});
}"""


def pages_of(site: Path) -> list[str]:
    paths = sorted(p.relative_to(site).parent.as_posix() for p in site.rglob("index.html"))
    return [("" if p == "." else p + "/") for p in paths if not p.startswith(("assets", "search"))]


def gzip_size(site: Path, base: str, url: str) -> int:
    path = url[len(base) :].split("?")[0].split("#")[0]
    file = site / path
    if file.is_dir() or path.endswith("/") or path == "":
        file = file / "index.html"
    return len(gzip.compress(file.read_bytes(), 6)) if file.is_file() else 0


def bytes_before_intent(browser, site: Path, base: str) -> list[tuple[str, int, int]]:
    rows = []
    for path in pages_of(site):
        ctx = browser.new_context()
        page = ctx.new_page()
        urls: list[str] = []
        page.on("request", lambda r, urls=urls: r.url.startswith(base) and urls.append(r.url))
        page.goto(base + path, wait_until="load")
        height = page.evaluate("document.documentElement.scrollHeight")
        for y in range(0, height + 900, 600):
            page.evaluate("(y) => window.scrollTo(0, y)", y)
            page.wait_for_timeout(30)
        page.wait_for_timeout(1500)
        ctx.close()
        heavy = sum(1 for u in urls if HEAVY.search(u))
        rows.append((path or "/", sum(gzip_size(site, base, u) for u in set(urls)), heavy))
    return rows


READ_S = 2.0  # a reader's pause between the first widget going live and the click on "next"

LIVE_JS = """() => {
  const live = (window.benchLive = {});
  document.addEventListener("focusin", () => { live.focus = live.focus || performance.now(); }, true);
  new MutationObserver(() => {
    const w = document.querySelector('[data-widget="attention"]');
    if (w.dataset.state === "ready" && live.focus && !live.ready) live.ready = performance.now();
  }).observe(document.body, {subtree: true, attributes: true, attributeFilter: ["data-state"]});
}"""

NAV_JS = """() => {
  const nav = (window.benchNav = {});
  document.addEventListener("click", () => { nav.click = nav.click || performance.now(); }, true);
  new MutationObserver(() => {
    const w = document.querySelector('[data-widget="race"]');
    if (w && w.dataset.state === "ready" && nav.click && !nav.ready) nav.ready = performance.now();
  }).observe(document.body, {subtree: true, childList: true, attributes: true, attributeFilter: ["data-state"]});
}"""


def open_page(browser, base: str, path: str):
    """A fresh context on `path`, long tasks recorded from now: (context, page, page time now)."""
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(base + path, wait_until="load")
    page.evaluate(LONGTASKS_JS)
    return ctx, page, page.evaluate("performance.now()")


def long_ms_since(page, t: float) -> float:
    return page.evaluate("(t) => window.benchLong.filter(([s]) => s >= t).reduce((n, [, d]) => n + d, 0)", t)


def first_widget(browser, base: str, read_s: float = 0) -> tuple[float, float, float]:
    """Focus a control on /attention/: (seconds until live, long-task ms in between,
    seconds from the click on the footer's next link to the next page's widget live).
    The click comes `read_s` seconds after the widget is live: 0, at once, while the page and
    the worker still do their idle work (Plotly starting, kvlab's modules importing); or after
    a reader's pause, when they have done it."""
    ctx, page, t_click = open_page(browser, base, "attention/")
    page.evaluate(LIVE_JS)
    page.locator('[data-widget="attention"] input[name="d"]').first.focus()  # intent, as a reader tabbing to a control
    page.wait_for_function("() => window.benchLive.ready", timeout=300_000, polling=20)
    # timed in the page, from the focus event to data-state="ready", as the bare page times itself
    # (the driver's wait notices "ready" late, by a varying amount that would count against the widget:
    # bench/results/2026-12-02-runtime.md)
    live = page.evaluate("() => (benchLive.ready - benchLive.focus) / 1000")
    page.wait_for_timeout(read_s * 1000)
    long_ms = long_ms_since(page, t_click)
    # then the next page, by the footer link (attention → quadratic-wall), timed in the page from the
    # click event to the race widget's data-state="ready" (the driver's round trips are not the reader's)
    page.evaluate(NAV_JS)
    page.locator("a.md-footer__link--next").click()
    page.wait_for_function("() => window.benchNav.ready", timeout=300_000, polling=20)
    second = page.evaluate("() => (benchNav.ready - benchNav.click) / 1000")
    ctx.close()
    return live, long_ms, second


def first_generate(browser, base: str) -> tuple[float, float]:
    ctx, page, t_click = open_page(browser, base, "generate/")
    root = page.locator('[data-widget="generate"]').first
    t0 = time.perf_counter()
    root.locator('[data-action="generate"]').click()  # the reader's first click: intent, the model loads
    page.wait_for_selector('[data-widget="generate"][data-state="ready"]', timeout=300_000)
    if not root.get_attribute("data-tokens"):
        root.locator('[data-action="generate"]').click()  # then Generate
    page.wait_for_function("(r) => r.dataset.tokens", arg=root.element_handle(), timeout=300_000, polling=50)
    done = time.perf_counter() - t0
    long_ms = long_ms_since(page, t_click)
    ctx.close()
    return done, long_ms


def bare_pyodide(browser, site: Path, base: str) -> float:
    (site / "bench-bare.html").write_text(BARE_PAGE)
    try:
        ctx = browser.new_context()
        page = ctx.new_page()
        page.goto(base + "bench-bare.html")
        ms = page.evaluate("window.bare")
        ctx.close()
        return ms / 1000
    finally:
        (site / "bench-bare.html").unlink()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", type=Path, default=Path("site"))
    ap.add_argument("--port", type=int, default=8765, help="the port the site was built for (KVLAB_SITE_URL)")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    server, base = serve(args.site.resolve(), args.port)
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores); Chromium {CHROMIUM}", flush=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        rows = bytes_before_intent(browser, args.site.resolve(), base)
        firsts, bares, gens, paused = [], [], [], []
        for _ in range(args.reps):
            bares.append(bare_pyodide(browser, args.site.resolve(), base))
            firsts.append(first_widget(browser, base))
            paused.append(first_widget(browser, base, read_s=READ_S)[2])
            gens.append(first_generate(browser, base))
        browser.close()
    server.shutdown()
    med = statistics.median
    live, long_ms, second = (med(x) for x in zip(*firsts))
    gen_s, gen_long = (med(x) for x in zip(*gens))
    bare = med(bares)
    worst = max(rows, key=lambda r: r[1])
    print("\n| measure | value | target |\n|---|---|---|")
    print(f"| bytes before intent, gzip, worst page ({worst[0]}) | {worst[1] / 1000:.0f} KB | ≤ 250 KB |")
    print(f"| pages that fetched a runtime file before intent | {sum(1 for r in rows if r[2])} of {len(rows)} | 0 |")
    print(f"| first Python widget live after the click | {live:.2f} s | |")
    print(f"| bare Pyodide + numpy page (main thread) | {bare:.2f} s | |")
    print(f"| ratio widget / bare | {live / bare:.2f}× | ≤ 1.2× |")
    print(f"| long tasks, click → Python widget live | {long_ms:.0f} ms | ≤ 200 ms |")
    print(f"| first Generate: click → tokens shown | {gen_s:.2f} s | |")
    print(f"| long tasks, click → first Generate done | {gen_long:.0f} ms | ≤ 200 ms |")
    print(f"| second page's widget live after navigation, clicked at once | {second:.2f} s | ≤ 0.3 s |")
    print(f"| the same, clicked {READ_S:.0f} s after the first was live | {med(paused):.2f} s | ≤ 0.3 s |")
    print(f"\nmedians of {args.reps}; load average at the end: {os.getloadavg()[0]:.2f}")
    print("\n| page | gzip KB before intent | runtime files |\n|---|---|---|")
    for path, size, heavy in rows:
        print(f"| {path} | {size / 1000:.0f} | {heavy} |")


if __name__ == "__main__":
    sys.exit(main())
