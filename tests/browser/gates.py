"""Quality gates shared by tests/browser/test_gates.py (and usable elsewhere).

- `site_pages(site)`: every HTML page of a build (content pages, embed pages,
  404), found on disk, so a page added later is checked the day it is added.
- `GateWatch`: a browser context's Content-Security-Policy violations (a
  `securitypolicyviolation` listener in every frame, plus Chromium's console
  lines for violations in workers), uncaught page errors and console errors.
- `run_axe(page)`: axe-core (vendored from npm for the tests only, never shipped
  in the site) on the page as it is now; returns the violations.
- `run_axe_focused(page, selector)`: axe's color-contrast on each matching control
  while it has focus (material styles :focus and :hover alike), transitions done.
- `SCHEME_AT_CONTENT_JS`: an init script that records the colour scheme the page
  was in when its content began to arrive (the scheme of the first paint).
- `go_live(root)`: show intent the way a reader does (focus a control inside
  the widget) and wait until it has rendered live data.
- `drive_by_keyboard(page, root)`: Tab to one of the widget's controls and use
  it, keyboard only, until the widget shows something new.
- `heavy_requests(page)`, `SCROLL_THROUGH_JS`: scrolling a page must download no runtime.
- `sideways(page)`: at a phone's width, what makes the page scroll sideways (the
  document wider than the viewport, or a table wider than its column outside a
  scroll container).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AXE_JS = ROOT / "node_modules" / "axe-core" / "axe.min.js"
LOAD_TIMEOUT_MS = 180_000  # Pyodide + numpy, or the model, on a loaded 2-core machine

# Reported by every frame (the embed gallery's iframes included) as it happens.
CSP_LISTENER = """
(() => {
  const seen = (window.__kvCsp = window.__kvCsp || []);
  document.addEventListener("securitypolicyviolation", (e) => {
    seen.push(`${e.effectiveDirective} blocked ${e.blockedURI || "(inline)"} at ${e.sourceFile || location.href}:${e.lineNumber}`);
  });
})();
"""

# What a reader does to show intent: a control inside the widget gets focus.
# (Not the Embed button, the "Make it live" button or a link: those are not intent.)
INTENT_CONTROLS = (
    ":is(input, select, textarea, button, [tabindex='0'])"
    ":not(.kv-embed-button):not(.kv-live-button):not(.kv-embed-copy):not([disabled])"
)


def site_pages(site: Path) -> list[str]:
    """Every page of the build as a URL path relative to the site root ('' = home)."""
    pages = []
    for html in sorted(site.rglob("*.html")):
        rel = html.relative_to(site).as_posix()
        if rel.startswith(("assets/", "search/")):
            continue
        pages.append("" if rel == "index.html" else rel.removesuffix("index.html"))
    return pages


def is_embed(path: str) -> bool:
    return path.startswith("embed/") and path != "embed/"


@dataclass
class GateWatch:
    """Problems a context's pages report; attach with `GateWatch.attach(context)`."""

    console_csp: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    @classmethod
    def attach(cls, context) -> GateWatch:
        watch = cls()
        context.add_init_script(CSP_LISTENER)
        context.on("page", watch.watch_page)
        return watch

    def watch_page(self, page) -> None:
        page.on("console", self.on_console)
        page.on("pageerror", lambda exc: self.page_errors.append(f"{page.url}: {exc}"))
        page.on("worker", lambda worker: worker.on("console", self.on_console) if hasattr(worker, "on") else None)

    def on_console(self, msg) -> None:
        text = msg.text
        if "Content Security Policy" in text or "Content-Security-Policy" in text:
            self.console_csp.append(text)
        elif msg.type == "error":
            self.console_errors.append(text)

    @staticmethod
    def csp_events(page) -> list[str]:
        """The securitypolicyviolation events every frame of the page has seen since the last
        call (read once: a page swapped in by instant navigation keeps the window's list)."""
        found = []
        for frame in page.frames:
            try:
                found += frame.evaluate("(window.__kvCsp || []).splice(0)")
            except Exception:  # a frame that navigated away meanwhile
                pass
        return found


WAIT_LIVE_JS = """(r, timeout) => new Promise((resolve) => {
  const t0 = Date.now();
  let idleSince = null;
  const tick = () => {
    const state = r.dataset.state;
    if (state === "ready" || state === "error") return resolve(state);
    // Widgets that wait for the reader's Run (model-race) stay "static" once live.
    if (state === "static" && r.dataset.activated === "true") {
      idleSince = idleSince || Date.now();
      if (Date.now() - idleSince > 3000) return resolve("idle");
    } else idleSince = null;
    if (Date.now() - t0 > timeout) return resolve(`still ${state}`);
    setTimeout(tick, 200);
  };
  tick();
})"""


def go_live(root, timeout: int = LOAD_TIMEOUT_MS) -> str:
    """Focus a control inside the widget (reader intent), wait until it is live.

    Returns "ready", "idle" (live, waiting for the reader's Run), "error", or
    "still <state>" after the timeout.
    """
    root.scroll_into_view_if_needed()
    # the runtime mounts the widget (reveals its controls) once the page's scripts ran;
    # from file:// that waits for the classic scripts that carry the binaries
    root.page.wait_for_function("r => r.dataset.mounted === 'true'", arg=root.element_handle(), timeout=timeout)
    control = root.locator(INTENT_CONTROLS).filter(visible=True).first
    if control.count():
        control.focus()
    else:  # nothing visible to focus before the runtime mounts: the reader's other way in
        root.locator(".kv-live-button").first.click()
    return root.evaluate(WAIT_LIVE_JS, timeout)


def run_axe(page, context: str = "document") -> list[dict]:
    """axe-core's violations for the page as it is now (all rules, all impacts).

    Injected through the DevTools protocol (page.evaluate), which the page's
    Content-Security-Policy does not govern: a <script> tag would be refused.
    """
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE_JS.read_text(encoding="utf-8") + "\n;0")
    result = page.evaluate(f"axe.run({context}, {{resultTypes: ['violations']}})")
    return result["violations"]


# Focused (or hovered: material styles both alike) a widget's button takes material's
# accent fill; its text must still read on it. Every visible, enabled match is put in that
# state at once (DevTools' forced :focus, as its Elements panel does), transitions are
# finished (axe measured a colour half-way, #82a4f2 on #fa0, 1.28:1, only in the dark
# scheme), and one axe color-contrast run checks them all: a button's fill depends on its
# own state alone (material: `.md-button:focus, .md-button:hover`).
MARK_FOCUS_JS = """(selector) => {
  let n = 0;
  for (const el of document.querySelectorAll(selector))
    if (!el.disabled && el.checkVisibility()) (el.dataset.kvFocusCheck = "1"), n++;
  return n;
}"""

FOCUSED_AXE_JS = """async () => {
  const els = [...document.querySelectorAll("[data-kv-focus-check]")];
  const result = await axe.run(els, {runOnly: ["color-contrast"], resultTypes: ["violations"], elementRef: true});
  const name = (el) => `${el.tagName.toLowerCase()}.${[...el.classList].join(".")} "${el.textContent.trim().slice(0, 24)}"`;
  const found = result.violations.map((v) => ({...v, nodes: v.nodes.map(({element, ...n}) => ({...n, target: [name(element), ...n.target.map((t) => String(t).replace('[data-kv-focus-check="1"]', ""))]}))}));
  els.forEach((el) => delete el.dataset.kvFocusCheck);
  return found;
}"""

# before axe measures, and back at rest after: no colour half-way through a fade
FINISH_TRANSITIONS_JS = (
    "() => { for (const a of document.getAnimations()) if (a instanceof CSSTransition) a.finish(); }"
)

# A widget's buttons (the site's content pages: Embed and the widgets' own; the embed
# gallery's previews). "Make it live" goes once the widget is live: LIVE_BUTTONS, before.
WIDGET_BUTTONS = ":is(.kv-widget, .kv-gallery-item) .md-button:not(.kv-live-button)"
LIVE_BUTTONS = ".kv-widget .kv-live-button"


def run_axe_focused(page, selector: str = WIDGET_BUTTONS) -> list[dict]:
    """axe's color-contrast violations of each visible, enabled match in its focused state.

    The state is forced through the DevTools protocol (CSS.forcePseudoState), not given by
    focus: focus on "Make it live" or Embed is not intent, and on a widget's own button it
    would be, so this changes nothing the page knows of.
    """
    if not page.evaluate(MARK_FOCUS_JS, selector):
        return []
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE_JS.read_text(encoding="utf-8") + "\n;0")
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        nodes = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "[data-kv-focus-check]"})["nodeIds"]
        for node in nodes:
            cdp.send("CSS.forcePseudoState", {"nodeId": node, "forcedPseudoClasses": ["focus", "focus-visible"]})
        page.evaluate(FINISH_TRANSITIONS_JS)
        found = page.evaluate(FOCUSED_AXE_JS)
        for node in nodes:
            cdp.send("CSS.forcePseudoState", {"nodeId": node, "forcedPseudoClasses": []})
        page.evaluate(FINISH_TRANSITIONS_JS)
    finally:
        cdp.detach()
    return found


# What "a runtime" is, by URL: the workers' scripts, Pyodide, onnxruntime-web, the model, kvlab's zip.
HEAVY = re.compile(
    r"/assets/(kvlab/worker\.js|kvlab/model\.js|kvlab/snapshot\.js|kvlab/kvlab-[0-9a-f]+\.zip|kvlab/python-[0-9a-f]+\.snap\.gz|vendor/pyodide/|vendor/ort/|models/)"
)

# Top to bottom, as a reader skimming the page would, without touching anything: a step
# of 600 px, two frames each (the widgets' IntersectionObservers report in between).
SCROLL_THROUGH_JS = """async () => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  for (let y = 0; y < document.documentElement.scrollHeight + 900; y += 600) {
    window.scrollTo(0, y);
    await frame();
  }
}"""

# An idle moment (the old runtime started the widgets in view after one), then: are all static?
ALL_STATIC_AFTER_IDLE_JS = """() => new Promise((resolve) => requestIdleCallback(() => resolve(
  [...document.querySelectorAll("[data-widget]")].every((w) => w.dataset.state === "static")), {timeout: 2000}))"""


def heavy_requests(page) -> list[str]:
    """The runtime downloads the page starts from now on (a list that fills as they happen)."""
    got: list[str] = []
    page.on("request", lambda r: HEAVY.search(r.url) and got.append(r.url))
    return got


# When the page's content starts to arrive, which scheme is the body in? (The scheme of
# the first paint: palette.js sets the system's before the content, material's bundle did
# it after the page had painted light.) Read it back from window.__schemeAtContent.
SCHEME_AT_CONTENT_JS = """
window.__schemeAtContent = null;
new MutationObserver((records, observer) => {
  for (const r of records) for (const n of r.addedNodes) {
    if (n.nodeType === 1 && n.matches('.md-container, .md-main, .md-content, article')) {
      window.__schemeAtContent = document.body.getAttribute('data-md-color-scheme');
      observer.disconnect();
      return;
    }
  }
}).observe(document, {childList: true, subtree: true});
"""


def describe(violations: list[dict], impacts=("serious", "critical")) -> list[str]:
    """One line per violation of the given impacts: rule, impact, first targets, why."""
    lines = []
    for v in violations:
        if v["impact"] not in impacts:
            continue
        targets = "; ".join(" ".join(map(str, n["target"])) for n in v["nodes"][:3])
        why = v["nodes"][0]["failureSummary"].replace("\n", " ")[:240] if v["nodes"] else ""
        lines.append(f"{v['impact']} {v['id']} ×{len(v['nodes'])}: {targets} — {why}")
    return lines


# ------------------------------------------------------------ keyboard alone

MAX_TABS = 40

FOCUSED_JS = """(root) => {
  const el = document.activeElement;
  if (!el || !root.contains(el)) return null;
  return {tag: el.tagName.toLowerCase(), type: (el.type || "").toLowerCase(),
          cls: el.className || "", name: el.name || "", text: (el.textContent || "").trim().slice(0, 40)};
}"""

# What the widget shows, minus the status line (it says "loading…" while the
# widget works) and minus the controls and their <output>s (those change with
# the key itself): a change here is the widget answering the reader.
SHOWN_JS = """(root) => {
  const clone = root.cloneNode(true);
  clone.querySelectorAll(".kv-status, script, template, form.kv-controls, output, textarea, select").forEach((el) => el.remove());
  return clone.textContent.replace(/\\s+/g, " ");
}"""


def key_for(control: dict) -> str | None:
    """The key that changes this control, or None for things that are not controls."""
    tag, kind = control["tag"], control["type"]
    if tag == "a" or "kv-embed" in control["cls"] or "kv-backlink" in control["cls"]:
        return None
    if tag == "input" and kind in ("range", "number"):
        return "ArrowRight" if kind == "range" else "ArrowUp"
    if tag == "input" and kind in ("checkbox", "radio"):
        return "Space"
    if tag == "select":
        return "ArrowDown"
    if tag == "textarea" or (tag == "input" and kind in ("text", "search", "")):
        return "x"
    if tag == "button":
        return "Enter"
    return None


# An arrow key at the end of a slider's or select's range goes the other way.
AT_END_JS = """(key) => {
  const e = document.activeElement;
  if (e.tagName === "SELECT" && key === "ArrowDown" && e.selectedIndex === e.options.length - 1) return "ArrowUp";
  if (e.type === "range" && key === "ArrowRight" && +e.value >= +e.max) return "ArrowLeft";
  if (e.type === "number" && key === "ArrowUp" && e.max !== "" && +e.value >= +e.max) return "ArrowDown";
  return key;
}"""


# After a key: resolves true once what the widget shows differs from `before`, false once
# the widget has been quiet (not "loading", nothing new shown) for `quietMs`: a call the key
# started sets "loading" at once (ctx.live), a debounced one within 200 ms (next-token,
# prefill-decode), so a control that has not answered 700 ms on (the debounce and half a second
# for a loaded machine) answers nothing by itself (a prompt box waiting for its Generate
# button) and the next control is tried. An answer later than that lands while the next
# control is tried: the run goes on, under that control's name. Waits in the page: no round
# trip per look.
CHANGES_JS = f"""(root, [before, quietMs, timeoutMs]) => new Promise((resolve) => {{
  const shown = {SHOWN_JS};
  const t0 = Date.now();
  let quietSince = t0;
  const look = () => {{
    if (shown(root) !== before) return resolve(true);
    if (root.dataset.state === "loading") quietSince = Date.now();
    if (Date.now() - quietSince >= quietMs || Date.now() - t0 > timeoutMs) return resolve(false);
    setTimeout(look, 50);
  }};
  look();
}})"""


def changes(root, before: str, quiet_ms: int = 700, timeout_ms: int = LOAD_TIMEOUT_MS) -> bool:
    """Whether what the widget shows differs from `before` after a key: a widget that started
    a call has until the call is drawn (a kvlab call, or the model's next token); one quiet
    for `quiet_ms` did not answer this key."""
    return root.evaluate(CHANGES_JS, [before, quiet_ms, timeout_ms])


# Tab starts from here: a point just before the widget (not in the tab order itself).
TAB_START_JS = """(r) => {
  const s = document.createElement("span");
  s.tabIndex = -1;
  s.className = "kv-test-tab-start";
  r.before(s);
  s.focus();
}"""


def drive_by_keyboard(page, root, from_top: bool = True) -> tuple[str | None, str | None]:
    """Reach one of the widget's controls with Tab from the top of the page (or, on a page
    with several widgets, from just before this one) and use it.

    "Make it live" is pressed with Enter if Tab meets it first; focus on a
    control is the reader's intent. The key is the one a reader would press (an
    arrow on a slider or a select, Space on a checkbox, Enter on a button, a
    character in a text box); a control whose change shows nothing by itself
    (a prompt box waiting for its Generate button) is left for the next one.
    Returns (what was pressed, None) or (None, what went wrong).
    """
    if from_top:
        page.locator("body").focus()
    else:
        root.evaluate(TAB_START_JS)
    try:
        return use_by_keyboard(page, root)
    finally:
        page.evaluate("() => document.querySelectorAll('.kv-test-tab-start').forEach((s) => s.remove())")


def use_by_keyboard(page, root) -> tuple[str | None, str | None]:
    tried = []
    for _ in range(MAX_TABS):
        page.keyboard.press("Tab")
        control = root.evaluate(FOCUSED_JS)
        if control is None:
            continue
        if "kv-live-button" in control["cls"]:
            page.keyboard.press("Enter")
            continue
        key = key_for(control)
        if key is None:
            continue
        state = root.evaluate(WAIT_LIVE_JS, LOAD_TIMEOUT_MS)
        if state not in ("ready", "idle"):
            return None, f"did not go live by keyboard ({state})"
        key = page.evaluate(AT_END_JS, key)
        before = root.evaluate(SHOWN_JS)
        page.keyboard.press(key)
        label = f"{key} on {control['tag']}[{control['name'] or control['type'] or control['text']}]"
        if changes(root, before):
            return label, None
        tried.append(label)
    return None, f"no control changed the widget within {MAX_TABS} Tabs (tried {tried})"


# ------------------------------------------------------------ a phone's width

WIDER_JS = """(width) => [...document.querySelectorAll('body *')]
  .filter((e) => e.getBoundingClientRect().right > width + 1).slice(0, 5).map((e) => e.tagName + '.' + e.className)"""

# a table wider than its column is fine inside a container that scrolls (overflow-x auto)
LOOSE_TABLES_JS = """() => [...document.querySelectorAll('.md-content table')].filter((t) => {
  if (t.closest('.kv-visually-hidden, .kv-sr-only, [hidden]')) return false;  // for screen readers only
  if (t.getBoundingClientRect().width <= t.parentElement.getBoundingClientRect().width + 1) return false;
  for (let p = t.parentElement; p && p !== document.body; p = p.parentElement)
    if (/(auto|scroll)/.test(getComputedStyle(p).overflowX)) return false;
  return true;
}).map((t) => t.className)"""


def sideways(page) -> list[str]:
    """What makes the page, as it is now, scroll sideways in its viewport: the document
    wider than the viewport (the widest elements named), or a table wider than its column
    with no scroll container."""
    width = page.viewport_size["width"]
    problems = []
    if (scroll := page.evaluate("document.documentElement.scrollWidth")) > width:
        problems.append(f"{scroll} px wide at {width} px: {page.evaluate(WIDER_JS, width)}")
    if loose := page.evaluate(LOOSE_TABLES_JS):
        problems.append(f"tables wider than the column with no scroll container: {loose}")
    return problems
