"""K and V are one picture from page to page (issue 37, "one picture of K and V").

The qkv picture on attention/ sets the colours (kvlab.css: --kv-k indigo, --kv-v teal). Every
other drawing of what the cache holds paints a token's entry with those same two colours, K over V:
the step-through grid (kv-cache/), the generate cache strip, the memory bar's KV cache segment
(gpu-fit on memory/) and the eviction and context-shift rasters (eviction/). Checked in both
schemes on the static pages (no runtime: the colours are the stylesheet's).
"""

from __future__ import annotations

import re

import pytest

# each drawing: page, the element, and how its colours are read (a CSS background, or the fill of
# the SVG pattern its cells use)
DRAWINGS = [
    ("attention/", '[data-widget="qkv"] th.kv-qkv-k', "color-k"),
    ("attention/", '[data-widget="qkv"] th.kv-qkv-v', "color-v"),
    ("kv-cache/", '[data-widget="step-through"] td.kv-st-read', "background"),
    ("kv-cache/", '[data-widget="step-through"] td.kv-st-computed', "background"),
    ("generate/", '[data-widget="generate"] .kv-gen-cells .kv-cell-read', "background"),
    ("generate/", '[data-widget="generate"] .kv-gen-cells .kv-cell-new', "background"),
    ("memory/", '[data-widget="gpu-fit"] .kv-bar .kv-seg-kv_cache', "background"),
    ("eviction/", '[data-widget="eviction"] svg.kv-static-raster rect.kv-ev2', "pattern"),
    ("eviction/", '[data-widget="context-shift"] svg.kv-static-raster rect.kv-cs2', "pattern"),
]

READ_JS = """([selector, how]) => {
  const rgb = (v) => { const d = document.createElement('span'); d.style.color = v; document.body.append(d);
                       const c = getComputedStyle(d).color; d.remove(); return c; };
  const el = document.querySelector(selector);
  if (!el) return null;
  const probe = getComputedStyle(el.closest('[data-widget]'));
  const k = rgb(probe.getPropertyValue('--kv-k-text').trim());
  const kFill = rgb(probe.getPropertyValue('--kv-k').trim()), vFill = rgb(probe.getPropertyValue('--kv-v').trim());
  const v = rgb(probe.getPropertyValue('--kv-v-text').trim());
  let seen;
  if (how === 'color-k' || how === 'color-v') seen = getComputedStyle(el).color;
  else if (how === 'background') seen = getComputedStyle(el).backgroundImage;
  else {
    const id = getComputedStyle(el).fill.match(/url\\("?#([^")]+)"?\\)/)[1];
    seen = [...document.getElementById(id).querySelectorAll('rect')].map((r) => getComputedStyle(r).fill).join(' ');
  }
  return {seen, kFill, vFill, kText: k, vText: v};
}"""


def colours(text: str) -> list[tuple[int, int, int]]:
    """The colours in a computed style, in order, as 0-255 rgb (rgb(...) and color-mix's color(srgb ...))."""
    out = []
    for m in re.finditer(r"rgba?\(([^)]*)\)|color\(srgb ([^)]*)\)", text):
        if m.group(1) is not None:
            out.append(tuple(round(float(x)) for x in re.split(r"[ ,/]+", m.group(1).strip())[:3]))
        else:
            out.append(tuple(round(float(x) * 255) for x in m.group(2).split()[:3]))
    return out


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_every_drawing_of_the_cache_uses_the_k_and_v_colours(page, site_url, scheme):
    checked = 0
    for path, selector, how in DRAWINGS:
        page.goto(site_url + path)
        page.evaluate(
            "(s) => { document.body.setAttribute('data-md-color-scheme', s); }",
            scheme,
        )
        got = page.evaluate(READ_JS, [selector, how])
        assert got is not None, f"{path}: no {selector}"
        seen = colours(got["seen"])
        k, v = colours(got["kFill"])[0], colours(got["vFill"])[0]
        if how == "color-k":
            assert seen == colours(got["kText"]), (path, selector, got)
        elif how == "color-v":
            assert seen == colours(got["vText"]), (path, selector, got)
        else:
            # a faded cell mixes the colour with transparent: its rgb stays the same
            assert k in seen and v in seen, (path, selector, got)
            assert seen.index(k) < seen.index(v), f"{path} {selector}: K is drawn over V everywhere"
        checked += 1
    assert checked == len(DRAWINGS)
