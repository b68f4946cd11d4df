/* material's inline head script, moved to a file so the Content-Security-Policy
 * needs no 'unsafe-inline' for scripts. The scope (base URL) comes from the tag's
 * data-scope, as material's template writes it into the inline script. */
__md_scope = new URL(document.currentScript.dataset.scope, location),
__md_hash = e => [...e].reduce(((e, _) => (e << 5) - e + _.charCodeAt(0)), 0),
__md_get = (e, _ = localStorage, t = __md_scope) => JSON.parse(_.getItem(t.pathname + "." + e)),
__md_set = (e, _, t = localStorage, a = __md_scope) => { try { t.setItem(a.pathname + "." + e, JSON.stringify(_)) } catch (e) {} };

/* Code-block toolbars are <nav> landmarks that material leaves unnamed: give each
 * a distinct name (axe: landmark-unique). */
(() => {
  let n = 0;
  new MutationObserver((records) => {
    for (const r of records) for (const node of r.addedNodes) {
      if (node.nodeType === 1 && node.matches("nav.md-code__nav") && !node.hasAttribute("aria-label")) {
        node.setAttribute("aria-label", `Code block ${++n}: copy`);
      }
    }
  }).observe(document.documentElement, { childList: true, subtree: true });
})();

/* kvlab: scripts run on this page, known before the first paint, so a widget's
 * live-only parts (status line, controls) take their place from the start and
 * only become visible when the widget mounts: nothing moves (kvlab.css, "kv-js"). */
document.documentElement.classList.add("kv-js");
