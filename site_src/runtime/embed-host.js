/* kvlab embed host script: put it once on a page that embeds kvlab widgets.
 * It resizes each <iframe data-kvlab-embed> to fit its content. It accepts a
 * message only from the iframe it belongs to (same window, same origin as the
 * iframe's src) and only of the expected shape:
 *   {type: "kvlab:resize", height: <number of CSS pixels>}
 */
(function () {
  "use strict";
  if (window.kvlabEmbedHost) return;
  window.kvlabEmbedHost = true;
  const MIN = 120;
  const MAX = 4000;
  window.addEventListener("message", function (event) {
    const msg = event.data;
    if (!msg || typeof msg !== "object" || msg.type !== "kvlab:resize") return;
    if (typeof msg.height !== "number" || !isFinite(msg.height)) return;
    const frames = document.querySelectorAll("iframe[data-kvlab-embed]");
    for (const frame of frames) {
      if (frame.contentWindow !== event.source) continue;
      let origin;
      try {
        origin = new URL(frame.src, location.href).origin;
      } catch (e) {
        return;
      }
      // file:// pages post with origin "null"; accept that only for a file:// iframe
      if (event.origin !== origin && !(origin === "null" && event.origin === "null")) return;
      frame.style.height = Math.round(Math.min(MAX, Math.max(MIN, msg.height))) + "px";
      frame.dataset.kvlabResized = "true";
      return;
    }
  });
})();
