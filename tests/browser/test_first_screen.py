"""Every page opens on a question and a figure (issue 37): under the title, a one-sentence
question (.kv-lead) and then the page's first widget, whose top edge is inside the first
screen at 1280 x 800 and at 375 x 812, the home page included. The pages are the nav's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

NAV = re.findall(
    r"^\s+- .*?:\s*([\w-]+)\.md\s*$", (Path(__file__).resolve().parents[2] / "mkdocs.yml").read_text(), re.M
)
PAGES = [p for p in NAV if p != "embed"]  # the gallery is a list of every widget, not a page with a question

FIRST_JS = """() => {
    const article = document.querySelector("article");
    const title = article.querySelector("h1");
    const lead = article.querySelector("h1 ~ p.kv-lead");
    const widget = article.querySelector("[data-widget]");
    // what stands between the title and the first widget: only the question
    const between = [];
    for (let n = title.nextElementSibling; n && n !== widget && !n.contains(widget); n = n.nextElementSibling) between.push(n.tagName + "." + n.className);
    return {
        lead: lead ? lead.textContent.trim() : null,
        top: widget ? widget.getBoundingClientRect().top + scrollY : null,
        between,
    };
}"""


@pytest.mark.parametrize("size", [(1280, 800), (375, 812)], ids=["1280", "375"])
def test_every_page_opens_on_a_question_and_a_figure(page_factory, site_url, size):
    page, _ = page_factory(allowed=[site_url], viewport={"width": size[0], "height": size[1]})
    assert len(PAGES) >= 14, PAGES
    late = []
    for slug in PAGES:
        page.goto(site_url + ("" if slug == "index" else f"{slug}/"))
        first = page.evaluate(FIRST_JS)
        assert first["lead"] and first["lead"].count("?") >= 1, f"{slug}: no opening question ({first['lead']!r})"
        assert first["between"] == ["P.kv-lead"], f"{slug}: between the title and the first figure: {first['between']}"
        if first["top"] is None or first["top"] >= size[1]:
            late.append(f"{slug}: first widget at {first['top']} px")
    assert late == [], late


HOME_LINK_JS = """() => {
    const link = document.querySelector(".md-sidebar--primary .md-nav--primary > .md-nav__list > .md-nav__item > a");
    const box = link.getBoundingClientRect();
    const hit = document.elementFromPoint(box.left + 4, box.top + box.height / 2);
    return {text: link.textContent.trim(), shown: !!hit && link.contains(hit), hit: hit ? hit.outerHTML.slice(0, 80) : null};
}"""


def test_the_sidebars_first_link_is_never_under_its_title(page_factory, site_url):
    # At 1280 x 800 the nav is taller than the window; material scrolls the active link into view, and before
    # session 21 its sticky title (the site's name again) then covered "Home" on the engineers' pages
    page, _ = page_factory(allowed=[site_url], viewport={"width": 1280, "height": 800})
    covered = []
    for slug in PAGES:
        page.goto(site_url + ("" if slug == "index" else f"{slug}/"))
        page.wait_for_timeout(150)  # material's sidebar scroll runs after load
        first = page.evaluate(HOME_LINK_JS)
        assert first["text"] == "Home"
        if not first["shown"]:
            covered.append(f"{slug}: {first['hit']}")
    assert covered == [], covered
