/* material 9.7.6's inline palette script (partials/javascripts/palette.html), moved to a file for the Content-Security-Policy. */
var palette=__md_get("__palette");if(palette&&palette.color){if("(prefers-color-scheme)"===palette.color.media){var media=matchMedia("(prefers-color-scheme: light)"),input=document.querySelector(media.matches?"[data-md-color-media='(prefers-color-scheme: light)']":"[data-md-color-media='(prefers-color-scheme: dark)']");palette.color.media=input.getAttribute("data-md-color-media"),palette.color.scheme=input.getAttribute("data-md-color-scheme"),palette.color.primary=input.getAttribute("data-md-color-primary"),palette.color.accent=input.getAttribute("data-md-color-accent")}for(var[key,value]of Object.entries(palette.color))document.body.setAttribute("data-md-color-"+key,value)}

/* kvlab: a first visit (no stored choice) takes the palette whose media query matches, as
 * material's bundle does later (embed pages have no bundle); here it happens before the
 * first paint, so a dark-mode reader gets no light first paint, and the page no full
 * restyle when the bundle would switch it.
 * The palettes come from mkdocs.yml (partials/javascripts/palette.html). */
if (!(palette && palette.color)) {
  const palettes = JSON.parse(document.currentScript.dataset.palettes || "[]");
  const follow = () => {
    if (__md_get("__palette")) return; // the reader picked one since (material's toggle)
    const match = palettes.find((p) => p.media && matchMedia(p.media).matches);
    if (match) for (const key of ["media", "scheme", "primary", "accent"]) document.body.setAttribute(`data-md-color-${key}`, match[key]);
  };
  follow();
  // and again when the system's scheme changes (embed pages run no material script to do it)
  palettes.forEach((p) => p.media && matchMedia(p.media).addEventListener("change", follow));
}

/* kvlab: two of material's palette steps restyle the whole page on every load; on a long
 * page that is much of the main thread's work after the first paint
 * (bench/results/2026-12-02-lighthouse-session7.md).
 * - Material sets, then clears, data-md-color-switching on <body> to stop transitions while
 *   colours change: two full restyles. The build drops that rule from material's palette
 *   CSS (sitebuild/kvlab_hooks.py); kvlab.css has it on kv-color-switching, which is set
 *   here, on <html>, only when the reader switches.
 * - Material writes <meta name="color-scheme"> on every load, and Chromium restyles the page
 *   on every write, even of the same value. The first such meta is the one that counts, so
 *   it is added here, before the content is parsed, and material's writes reach it only
 *   when the value changes. */
(() => {
  // Material also appends a second color-scheme meta of its own when its bundle starts;
  // it is never the one used, yet Chromium restyles every element when it is inserted.
  // The one append is skipped (material keeps the element; its writes to it reach ours).
  const head = document.head;
  head.appendChild = function (node) {
    if (!(node instanceof HTMLMetaElement && node.name === "color-scheme")) return Node.prototype.appendChild.call(this, node);
    delete head.appendChild;
    return node;
  };
  const scheme = document.createElement("meta");
  scheme.name = "color-scheme";
  scheme.content = getComputedStyle(document.body).colorScheme;
  document.head.append(scheme);
  const content = Object.getOwnPropertyDescriptor(HTMLMetaElement.prototype, "content");
  Object.defineProperty(HTMLMetaElement.prototype, "content", {
    ...content,
    set(value) {
      if (this.name !== "color-scheme" || this === scheme) content.set.call(this, value);
      else if (scheme.content !== value) content.set.call(scheme, value);
    },
  });
  document.addEventListener(
    "change",
    (event) => {
      if (!(event.target instanceof Element) || !event.target.matches("input[data-md-color-media]")) return;
      const root = document.documentElement;
      root.classList.add("kv-color-switching");
      requestAnimationFrame(() => requestAnimationFrame(() => root.classList.remove("kv-color-switching")));
    },
    true,
  );
})();
