/* kvlab runtime, part 5 (page): embeds.
 *
 *   kvlab.embedSnippet(name, title, height, query)   the <iframe> + resize script to paste
 *   kvlab.applyQueryParams(root, search)             ?name=value settings on an embed page:
 *                                                    only the widget's own controls, numbers
 *                                                    decimal only and clamped (with a notice),
 *                                                    choices checked against the options
 *   kvlab.mountEmbedControl(root)                    the Embed button on a content page
 *   kvlab.mountEmbedPage(root, ctx)                  an embed page: resize messages, URL settings, copy buttons
 *   kvlab.fillGallerySnippets()                      the gallery's snippets, with absolute URLs
 */
(function () {
  "use strict";

  const kv = window.kvlab;

  // ------------------------------------------------------------------ embeds

  const SITE_ROOT = new URL("../", kv.assets).href;

  function embedURL(name) {
    return new URL(kv.manifest.directoryUrls ? `embed/${name}/` : `embed/${name}.html`, SITE_ROOT).href;
  }

  function escapeAttr(text) {
    return String(text).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  }

  kv.embedSnippet = function (name, title, height, query) {
    const src = embedURL(name) + (query || "");
    return (
      `<iframe src="${escapeAttr(src)}" title="${escapeAttr(title)}" loading="lazy" width="100%" height="${height}" ` +
      `style="border:0;max-width:100%" data-kvlab-embed></iframe>\n` +
      `<script src="${escapeAttr(new URL("assets/kvlab/embed-host.js", SITE_ROOT).href)}" defer></script>`
    );
  };

  /* The Embed button: show the snippet (with the widget's current settings). */
  kv.mountEmbedControl = function (root) {
    const button = root.querySelector(".kv-embed-button");
    const panel = button && root.querySelector(".kv-embed-panel");
    if (!panel) return;
    const area = panel.querySelector("textarea");
    const copied = panel.querySelector(".kv-embed-copied");
    const title = root.querySelector(".kv-widget-title").textContent;
    const currentQuery = () => {
      const form = root.querySelector("form.kv-controls");
      if (!form) return "";
      const q = new URLSearchParams();
      for (const el of form.elements) {
        if (!el.name || el.type === "submit" || el.tagName === "OUTPUT") continue;
        q.set(el.name, el.type === "checkbox" ? String(el.checked) : el.value);
      }
      return "?" + q.toString();
    };
    button.addEventListener("click", () => {
      const open = panel.hidden;
      panel.hidden = !open;
      button.setAttribute("aria-expanded", String(open));
      if (open) {
        area.value = kv.embedSnippet(root.dataset.widget, title, root.dataset.embedHeight, currentQuery());
        area.focus();
        area.select();
      }
    });
    panel.querySelector(".kv-embed-copy").addEventListener("click", async () => {
      const done = await copyOrSelect(area.value, () => (area.focus(), area.select()));
      copied.textContent = done ? "Copied." : "Press Ctrl+C (⌘C) to copy the selected snippet.";
    });
  };

  /* ?name=value settings on an embed page: only the widget's own controls,
   * numbers clamped to the control's min/max and step, choices checked
   * against the options. Returns what was ignored, to be told to the reader. */
  kv.applyQueryParams = function (root, search) {
    const form = root.querySelector("form.kv-controls");
    const ignored = [];
    const clamped = [];
    let applied = 0;
    for (const [key, raw] of new URLSearchParams(search)) {
      const el = form && form.elements.namedItem(key);
      if (!el || !el.name || el.tagName === "OUTPUT") {
        ignored.push(key);
        continue;
      }
      if (el.type === "checkbox") {
        if (/^(1|true|yes|on)$/i.test(raw)) el.checked = true;
        else if (/^(0|false|no|off)$/i.test(raw)) el.checked = false;
        else {
          ignored.push(key);
          continue;
        }
      } else if (el.type === "range" || el.type === "number") {
        // decimal only: "0x10", "1e3", " 5" and "" are not numbers a reader typed
        if (!/^-?\d+(\.\d+)?$/.test(raw)) {
          ignored.push(key);
          continue;
        }
        const asked = Number(raw);
        const min = el.min === "" ? -Infinity : Number(el.min);
        const max = el.max === "" ? Infinity : Number(el.max);
        let v = Math.min(max, Math.max(min, asked));
        const step = Number(el.step);
        if (step > 0 && Number.isFinite(min)) v = min + Math.round((v - min) / step) * step;
        v = Number(v.toFixed(6));
        if (v !== asked) clamped.push(`${key}: asked ${raw}, used ${v}`);
        el.value = String(v);
      } else if (el.tagName === "SELECT") {
        if (![...el.options].some((o) => o.value === raw)) {
          ignored.push(key);
          continue;
        }
        el.value = raw;
      } else {
        el.value = raw.slice(0, Number(el.maxLength) > 0 ? Number(el.maxLength) : 2000);
      }
      applied += 1;
    }
    return { applied, ignored, clamped };
  };

  /* On an embed page: tell the host page our height whenever it changes. */
  function postHeight() {
    const article = document.querySelector(".kv-widget");
    if (!article || window.parent === window) return;
    const height = Math.ceil(article.getBoundingClientRect().bottom + window.scrollY + 24);
    window.parent.postMessage({ type: "kvlab:resize", height }, "*");
  }

  /* On the site's pages material gives each code block a copy button and, while it
   * overflows, a tab stop so a keyboard can scroll it; embed pages run no material script
   * (site_src/overrides/embed.html), so their code blocks get both from here. */
  let overflowing = null; // made on an embed page's first code block, not on every page

  function watchOverflow(code) {
    if (!("ResizeObserver" in window)) return;
    overflowing = overflowing || new ResizeObserver((entries) => {
      for (const { target } of entries) {
        if (target.scrollWidth > target.clientWidth) target.setAttribute("tabindex", "0");
        else target.removeAttribute("tabindex");
      }
    });
    overflowing.observe(code);
  }

  /* Copy text to the clipboard; where that is refused (an iframe without the permission),
   * select() the text instead so Ctrl+C copies it. Resolves to whether it copied. */
  async function copyOrSelect(text, select) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch (err) {
      select();
      return false;
    }
  }

  function codeBlocks(root) {
    root.querySelectorAll("pre > code").forEach((code) => {
      const pre = code.parentElement;
      if (pre.querySelector(".kv-code-copy")) return;
      watchOverflow(code);
      const button = document.createElement("button");
      button.type = "button";
      button.className = "kv-code-copy";
      button.textContent = "Copy";
      button.setAttribute("aria-label", "Copy this code to the clipboard");
      button.addEventListener("click", async () => {
        const copied = await copyOrSelect(code.textContent, () => getSelection().selectAllChildren(code));
        button.textContent = copied ? "Copied" : "Selected: press Ctrl+C";
        setTimeout(() => (button.textContent = "Copy"), 2500);
      });
      pre.append(button);
    });
  }

  kv.mountEmbedPage = function (root, ctx) {
    codeBlocks(root);
    if ("ResizeObserver" in window) new ResizeObserver(postHeight).observe(root);
    window.addEventListener("load", postHeight);
    postHeight();
    if (!location.search) return;
    const { applied, ignored, clamped } = kv.applyQueryParams(root, location.search);
    if (ignored.length) ctx.notice(`Ignored ${ignored.map((k) => `“${k}”`).join(", ")}: not a setting of this widget, or not a valid value.`, "embed");
    if (clamped.length) ctx.notice(`Out of range, so clamped: ${clamped.join("; ")}.`, "embed-clamped");
    // Nothing starts without the reader: the settings apply when the widget goes live.
    if (applied) {
      root.dataset.embedApplied = "true";
      ctx.notice("This link sets some of the controls: the figure follows them when you make it live.", "embed-applied");
    }
  };

  /* The gallery page: snippets with this site's absolute URLs, and previews on
   * demand (each item has a link to its embed page; a click opens it in place). */
  function openPreview(item, link) {
    const frame = document.createElement("iframe");
    frame.src = link.href;
    frame.title = `${item.dataset.embedTitle} (live preview)`;
    frame.width = "100%";
    frame.height = item.dataset.embedHeight;
    frame.style.border = "0";
    frame.dataset.kvlabEmbed = "";
    link.parentNode.replaceWith(frame);
    frame.focus();
  }

  kv.fillGallerySnippets = function () {
    document.querySelectorAll(".kv-gallery-item").forEach((item) => {
      const code = item.querySelector(".kv-snippet code");
      code.textContent = kv.embedSnippet(item.dataset.embedName, item.dataset.embedTitle, item.dataset.embedHeight, "");
      const link = item.querySelector("a[data-embed-preview]");
      if (!link || link.dataset.wired) return;
      link.dataset.wired = "true";
      link.addEventListener("click", (ev) => {
        if (ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button > 0) return; // a new tab, as the reader asked
        ev.preventDefault();
        ev.stopPropagation(); // material's instant navigation would follow the link anyway
        openPreview(item, link);
      });
    });
  };
})();
