/* kvlab runtime, part 5 (page): embeds.
 *
 *   kvlab.embedSnippet(name, title, height, query)   the <iframe> + resize script to paste
 *   kvlab.isCompact()                                whether this embed page is compact (?compact=1:
 *                                                    embed-head.js sets kv-compact on <html>)
 *   kvlab.applyQueryParams(root, search)             ?name=value settings on an embed page:
 *                                                    only the widget's own controls, numbers
 *                                                    decimal only and clamped (with a notice),
 *                                                    choices checked against the options
 *   kvlab.widgetSettings(root, prefix)               the widget's current settings as a query (the
 *                                                    Embed snippet's, the Link's and the address bar's)
 *   kvlab.widgetKey(root)                            its key in a page's address: the widget's name,
 *                                                    "-2", "-3" … for later ones of the same name
 *   kvlab.mountEmbedControl(root)                    the Embed button on a content page
 *   kvlab.mountLinkControl(root)                     the Link button, and the address bar following the reader
 *   kvlab.mountLinkedSettings(root, ctx)             a content page's ?<key>.name=value settings for this widget
 *   kvlab.mountEmbedPage(root, ctx)                  an embed page: resize messages, URL settings, copy buttons,
 *                                                    its own snippets ("Embed this widget")
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

  /* Compact: an embed page's ?compact=1, read once, before the first paint, by embed-head.js. */
  kv.isCompact = () => document.documentElement.classList.contains("kv-compact");
  const COMPACT = "compact"; // the one name of an embed page's address that is no setting of its widget

  /* The snippet's query: the settings, and compact=1 for the compact embed. */
  function snippetQuery(root, compact) {
    const query = kv.widgetSettings(root);
    if (compact) query.set(COMPACT, "1");
    const text = query.toString();
    return text ? "?" + text : "";
  }

  /* A form element that is a setting: a named control, not a button or an <output>. */
  const isSetting = (el) =>
    Boolean(el && el.name) && !["BUTTON", "FIELDSET", "OUTPUT", "OBJECT"].includes(el.tagName) && !["submit", "button", "reset", "image"].includes(el.type);

  /* The widget's current settings as a query: each setting of its form, name=value (a
   * checkbox true or false), each name after `prefix`. The one source of "these settings"
   * for the Embed snippet (no prefix: an embed page holds one widget), the Link and the
   * address bar (prefix "<key>.": a content page may hold several). */
  kv.widgetSettings = function (root, prefix = "") {
    const query = new URLSearchParams();
    const form = root.querySelector("form.kv-controls");
    if (!form) return query;
    for (const el of form.elements) {
      if (!isSetting(el) || (el.type === "radio" && !el.checked)) continue;
      query.set(prefix + el.name, el.type === "checkbox" ? String(el.checked) : el.value);
    }
    return query;
  };

  /* The widget's key in a content page's address: its name, and for a later widget of the
   * same name on the page "-2", "-3" … (prefix-cache.md holds prefix-blocks twice). Derived
   * here only, from the page's order, and kept on the root (data-kv-key). */
  kv.widgetKey = function (root) {
    if (!root.dataset.kvKey) {
      const name = root.dataset.widget;
      const same = [...document.querySelectorAll("[data-widget]")].filter((r) => r.dataset.widget === name);
      const n = same.indexOf(root) + 1;
      root.dataset.kvKey = n > 1 ? `${name}-${n}` : name;
    }
    return root.dataset.kvKey;
  };

  /* A link to this page with this widget's current settings (and no other widget's),
   * scrolled to the widget (its frame's id). */
  kv.widgetLink = function (root) {
    const url = new URL(location.href);
    url.search = kv.widgetSettings(root, kv.widgetKey(root) + ".").toString();
    url.hash = root.id;
    return url.href;
  };

  /* The Embed and Link buttons share a pattern: the button opens its panel (one panel
   * at a time) with the text selected, "Copy" copies it, or selects it where the
   * clipboard is refused. Returns a function that refreshes the text of an open panel. */
  function sharePanel(root, button, panel, text, what) {
    const area = panel.querySelector("textarea");
    const copied = panel.querySelector("[role='status']");
    // what the widget shows that no setting carries (root.dataset.shareMisses, set by the widget)
    const note = panel.querySelector(".kv-share-note");
    const sayMissing = () => {
      if (!note) return;
      const missing = root.dataset.shareMisses || "";
      note.textContent = missing ? `Not in this ${what}: ${missing}.` : "";
      note.hidden = !missing;
    };
    const close = (b, p) => {
      p.hidden = true;
      b.setAttribute("aria-expanded", "false");
    };
    // the text box as tall as its text (a stylesheet's max-height caps it; it scrolls past that)
    const show = (value) => {
      sayMissing();
      area.value = value;
      area.style.height = "auto";
      area.style.height = `${area.scrollHeight + area.offsetHeight - area.clientHeight}px`;
      copied.textContent = "";
    };
    button.addEventListener("click", () => {
      const open = panel.hidden;
      if (!open) return close(button, panel);
      root.querySelectorAll(".kv-embed-button[aria-expanded='true']").forEach((b) => {
        const other = document.getElementById(b.getAttribute("aria-controls"));
        if (other) close(b, other);
      });
      panel.hidden = false;
      button.setAttribute("aria-expanded", "true");
      show(text());
      area.focus();
      area.select();
    });
    panel.querySelector(".kv-embed-copy").addEventListener("click", async () => {
      const done = await copyOrSelect(area.value, () => (area.focus(), area.select()));
      copied.textContent = done ? "Copied." : `Press Ctrl+C (⌘C) to copy the selected ${what}.`;
    });
    return () => {
      if (!panel.hidden && area.value !== text()) show(text());
      else sayMissing();
    };
  }

  /* The Embed button: show the snippet (with the widget's current settings); its "Compact"
   * box switches to the compact embed (controls and main result, a smaller height). */
  kv.mountEmbedControl = function (root) {
    const button = root.querySelector(".kv-embed-button:not(.kv-link-button)");
    const panel = button && root.querySelector(".kv-embed-panel:not(.kv-link-panel)");
    if (!panel) return;
    const title = root.querySelector(".kv-widget-title").textContent;
    const box = panel.querySelector(".kv-embed-compact-box");
    const compact = () => Boolean(box && box.checked);
    const height = () => (compact() && root.dataset.embedCompactHeight) || root.dataset.embedHeight;
    const snippet = () => kv.embedSnippet(root.dataset.widget, title, height(), snippetQuery(root, compact()));
    root.kvRefreshEmbed = sharePanel(root, button, panel, snippet, "snippet");
    if (box) box.addEventListener("change", () => root.kvRefreshEmbed());
  };

  /* The address bar, for this widget: the other widgets' settings and the hash as they
   * are, this one's as its form holds them now. replaceState: no new history entry (the
   * back button leaves the page, as before), and material's scroll offset in the state kept. */
  function followInAddress(root) {
    const key = kv.widgetKey(root);
    const url = new URL(location.href);
    const query = new URLSearchParams([...url.searchParams].filter(([k]) => !k.startsWith(key + ".")));
    for (const [k, v] of kv.widgetSettings(root, key + ".")) query.append(k, v);
    url.search = query.toString();
    if (url.href !== location.href) history.replaceState(history.state, "", url.href);
  }

  /* The Link button (a link to this page with this widget's settings), and the address
   * bar kept in step once the reader has changed a control of the live widget: 300 ms
   * after their last change (a dragged slider writes it once), and again after each
   * figure drawn (Python's clamped values back in the form). */
  kv.mountLinkControl = function (root) {
    const button = root.querySelector(".kv-link-button");
    const panel = button && root.querySelector(".kv-link-panel");
    const refreshLink = panel ? sharePanel(root, button, panel, () => kv.widgetLink(root), "link") : () => {};
    const form = root.querySelector("form.kv-controls");
    if (!form) return;
    const page = location.pathname;
    let changed = false;
    let timer = null;
    const follow = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (!root.isConnected || location.pathname !== page) return; // the reader has left the page
        followInAddress(root);
        refreshLink();
        if (root.kvRefreshEmbed) root.kvRefreshEmbed();
      }, 300);
    };
    const onChange = (ev) => {
      // not the form's own "input" that hands a link's settings to the widget as it goes live
      if (ev.target === form || root.dataset.activated !== "true") return;
      changed = true;
      follow();
    };
    form.addEventListener("input", onChange);
    form.addEventListener("change", onChange);
    // after each figure: the address bar once the reader has changed a control; the open panels always
    // (a widget's shareMisses may have changed with it)
    root.addEventListener("kvlab:rendered", () => {
      if (changed) return follow();
      refreshLink();
      if (root.kvRefreshEmbed) root.kvRefreshEmbed();
    });
  };

  /* A slider's readout (<output name="<name>-out">, the widgets' convention) shows the value a
   * link set before the widget goes live, where it echoes the number plainly (with as many
   * decimals as it shows); a readout in words waits for the widget. */
  function echo(form, el, before) {
    const out = form.elements.namedItem(`${el.name}-out`);
    if (!out || out.tagName !== "OUTPUT") return;
    const shown = out.value.trim();
    if (!/^-?\d+(\.\d+)?$/.test(shown) || Number(shown) !== Number(before)) return;
    out.value = Number(el.value).toFixed((shown.split(".")[1] || "").length);
  }

  /* ?name=value settings (an embed page's, or a content page's for one widget): only the widget's own controls,
   * numbers clamped to the control's min/max and step, choices checked
   * against the options. Returns what was ignored, to be told to the reader. */
  kv.applyQueryParams = function (root, search) {
    const form = root.querySelector("form.kv-controls");
    const unknown = new Set(); // names that are no setting of this widget
    const invalid = new Set(); // settings whose value is not one the control takes
    const clamped = [];
    let applied = 0;
    for (const [key, raw] of new URLSearchParams(search)) {
      const el = form && form.elements.namedItem(key);
      if (!isSetting(el)) {
        unknown.add(key);
        continue;
      }
      if (el.type === "checkbox") {
        if (/^(1|true|yes|on)$/i.test(raw)) el.checked = true;
        else if (/^(0|false|no|off)$/i.test(raw)) el.checked = false;
        else {
          invalid.add(key);
          continue;
        }
      } else if (el.type === "range" || el.type === "number") {
        // decimal only: "0x10", "1e3", " 5" and "" are not numbers a reader typed
        if (!/^-?\d+(\.\d+)?$/.test(raw)) {
          invalid.add(key);
          continue;
        }
        const asked = Number(raw);
        const min = el.min === "" ? -Infinity : Number(el.min);
        const max = el.max === "" ? Infinity : Number(el.max);
        let v = Math.min(max, Math.max(min, asked));
        const step = Number(el.step);
        if (step > 0 && Number.isFinite(min)) {
          v = min + Math.round((v - min) / step) * step;
          if (v > max) v -= step; // the last step at or under max
        }
        v = Number(v.toFixed(6));
        if (v !== asked) clamped.push(`${kv.fieldName(form, key)}: asked ${kv.shortText(raw)}, used ${v}`); // by its label, as the reader sees it
        const before = el.value;
        el.value = String(v);
        echo(form, el, before);
      } else if (el.tagName === "SELECT") {
        // an option's former values (data-aliases: an old link's "0.21+" is today's "0.20+") select it too
        const option = [...el.options].find((o) => o.value === raw || (o.dataset.aliases || "").split(" ").includes(raw));
        if (!option) {
          invalid.add(key);
          continue;
        }
        el.value = option.value;
      } else {
        // a text: as long as the control takes (its maxlength), else LINK_TEXT_CHARS; a cut is said
        const most = Number(el.maxLength) > 0 ? Number(el.maxLength) : LINK_TEXT_CHARS;
        el.value = raw.slice(0, most);
        if (raw.length > most)
          clamped.push(`${kv.fieldName(form, key)}: the link holds ${raw.length.toLocaleString("en-US")} characters, the first ${most.toLocaleString("en-US")} are used`);
      }
      applied += 1;
    }
    for (const key of invalid) unknown.delete(key);
    return { applied, unknown: [...unknown], invalid: [...invalid], clamped };
  };
  const LINK_TEXT_CHARS = 2000; // a link's text setting (a pasted log) beyond this is cut, and said

  /* On an embed page: tell the host page our height whenever it changes: the widget and,
   * below it, the fold "Embed this widget" (the page's content, not the window's height). */
  function postHeight() {
    const article = document.querySelector(".kv-widget");
    if (!article || window.parent === window) return;
    const foot = document.querySelector(".kv-embed-this");
    const bottom = Math.max(article.getBoundingClientRect().bottom, foot ? foot.getBoundingClientRect().bottom : 0);
    const height = Math.ceil(bottom + window.scrollY + 24);
    window.parent.postMessage({ type: "kvlab:resize", height }, "*");
  }

  /* An embed page's own snippets (the fold "Embed this widget" at its foot, written at build
   * time for readers without scripts): this site's absolute URLs and the widget's settings as
   * they are now, the whole widget and compact; refreshed after each figure and each change. */
  function mountEmbedThis(root) {
    const fold = document.querySelector("details.kv-embed-this");
    if (!fold) return;
    const { embedName: name, embedTitle: title, embedHeight: height, embedCompactHeight: compactHeight } = fold.dataset;
    const fill = () => {
      fold.querySelectorAll("pre.kv-snippet").forEach((pre) => {
        const compact = pre.dataset.embedMode === "compact";
        const code = pre.querySelector("code");
        const text = kv.embedSnippet(name, title, compact ? compactHeight : height, snippetQuery(root, compact));
        if (code.textContent !== text) code.textContent = text;
      });
    };
    fill();
    codeBlocks(fold);
    const form = root.querySelector("form.kv-controls");
    if (form) ["input", "change"].forEach((type) => form.addEventListener(type, fill));
    root.addEventListener("kvlab:rendered", fill);
    fold.addEventListener("toggle", () => (fill(), postHeight()));
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
    const foot = document.querySelector(".kv-embed-this");
    if ("ResizeObserver" in window) {
      const observer = new ResizeObserver(postHeight);
      observer.observe(root);
      if (foot) observer.observe(foot);
    }
    window.addEventListener("load", postHeight);
    postHeight();
    // the page's own name (compact) is no setting of the widget: not said to be ignored
    const search = new URLSearchParams([...new URLSearchParams(location.search)].filter(([k]) => k !== COMPACT));
    if ([...search.keys()].length) applySettings(root, ctx, search, "embed", (k) => k);
    mountEmbedThis(root);
  };

  /* A link's settings into the widget's form (kv.applyQueryParams: its validation), the
   * reader told what was ignored or clamped, in notes keyed `notes`, `notes`-clamped and
   * `notes`-applied. Nothing starts without the reader: root.dataset.embedApplied makes
   * the form's values reach the widget when it goes live (context.js). */
  function applySettings(root, ctx, search, notes, label) {
    const { applied, unknown, invalid, clamped } = kv.applyQueryParams(root, search);
    const named = (keys) => keys.map((k) => `“${kv.shortText(label(k))}”`).join(", ");
    const ignored = [
      unknown.length ? `${named(unknown)}: not ${unknown.length > 1 ? "settings" : "a setting"} of this widget` : "",
      invalid.length ? `${named(invalid)}: not a value ${invalid.length > 1 ? "these controls take" : "this control takes"}` : "",
    ].filter(Boolean);
    if (ignored.length) ctx.notice(`Ignored ${ignored.join("; ")}.`, notes);
    if (clamped.length) ctx.notice(`Out of range, so clamped: ${clamped.join("; ")}.`, `${notes}-clamped`);
    if (applied) {
      root.dataset.embedApplied = "true";
      ctx.notice("This link sets some of the controls: the figure follows them when you make it live.", `${notes}-applied`);
    }
  }

  /* A content page's address may carry settings for its widgets, each name after the
   * widget's key (kv.widgetKey): ?gpu-fit.model=llama-3.1-70b&gpu-fit.context=32768.
   * This widget takes its own; another widget's, or a name with no key of this page, is
   * not its business (said nowhere). Runs before the widget mounts, so mount() reads them. */
  kv.mountLinkedSettings = function (root, ctx) {
    const key = kv.widgetKey(root);
    const mine = new URLSearchParams();
    for (const [k, v] of new URLSearchParams(location.search)) if (k.startsWith(key + ".")) mine.append(k.slice(key.length + 1), v);
    if ([...mine.keys()].length) applySettings(root, ctx, mine, "link", (k) => `${key}.${k}`);
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
