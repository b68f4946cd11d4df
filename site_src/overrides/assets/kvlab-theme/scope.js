/* material's inline head script, moved to a file so the Content-Security-Policy
 * needs no 'unsafe-inline' for scripts. The scope (base URL) comes from the tag's
 * data-scope, as material's template writes it into the inline script. */
__md_scope = new URL(document.currentScript.dataset.scope, location),
__md_hash = e => [...e].reduce(((e, _) => (e << 5) - e + _.charCodeAt(0)), 0),
__md_get = (e, _ = localStorage, t = __md_scope) => JSON.parse(_.getItem(t.pathname + "." + e)),
__md_set = (e, _, t = localStorage, a = __md_scope) => { try { t.setItem(a.pathname + "." + e, JSON.stringify(_)) } catch (e) {} };

/* Material's instant navigation makes every relative href and src of the page absolute when
 * it starts (integrations/instant/index.ts, `resolve`), so that on a navigation it can compare
 * this page's <head> with the next one's. For a stylesheet <link>, writing the href loads the
 * sheet again, and when it comes back Chromium restyles every element of the page
 * (bench/results/2026-12-02-lighthouse-session9.md). Done here, right after the stylesheets and before <body> exists, the sheets come
 * again from the memory cache with nothing yet to restyle, and material then finds their hrefs
 * absolute and leaves them. Not from file://, where material's instant navigation is off. */
if (location.protocol !== "file:") {
  for (const link of document.querySelectorAll('link[rel="stylesheet"]')) link.href = link.href;
}

/* Code-block toolbars are <nav> landmarks that material leaves unnamed: give each
 * a distinct name (axe: landmark-unique). Material adds them from its bundle, after
 * the page is parsed, and again after each instant navigation, so the observer starts
 * at DOMContentLoaded (watching the parser add every node of a long page costs long tasks:
 * bench/results/2026-12-02-lighthouse-session5.md) and first names any already there. */
(() => {
  let n = 0;
  const name = (nav) => {
    if (!nav.hasAttribute("aria-label")) nav.setAttribute("aria-label", `Code block ${++n}: copy`);
  };
  const start = () => {
    document.querySelectorAll("nav.md-code__nav").forEach(name);
    new MutationObserver((records) => {
      for (const r of records) for (const node of r.addedNodes) {
        if (node.nodeType === 1 && node.matches("nav.md-code__nav")) name(node);
      }
    }).observe(document.documentElement, { childList: true, subtree: true });
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

/* kvlab: scripts run on this page, known before the first paint, so a widget's
 * live-only parts (status line, controls) take their place from the start and
 * only become visible when the widget mounts: nothing moves (kvlab.css, "kv-js"). */
document.documentElement.classList.add("kv-js");
