/* kvlab embed pages' first script, in the <head> (site_src/overrides/embed.html), so it
 * runs before the first paint: `?compact=1` (or true, yes, on) on an embed page's address
 * sets the class kv-compact on <html>, and embed.css lays the widget out compact from the
 * start (a class added by the runtime at the end of the body would move everything after
 * the first paint: a layout shift). embed.js reads the class (kvlab.isCompact). */
(function () {
  "use strict";
  var asked = new URLSearchParams(location.search).get("compact");
  if (asked && /^(1|true|yes|on)$/i.test(asked)) document.documentElement.classList.add("kv-compact");
})();
