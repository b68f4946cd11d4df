"""The teacher's page (issue 37, classroom): five "predict, then check" exercises, each with a
link that opens its widget set to the exercise's numbers, and an answer computed at build
time by the widget's own function. Followed here as a student would: the widget, made live
on the linked settings, shows the answer the page gives."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.widgets import wait_ready

ANSWERS_JS = """() => [...document.querySelectorAll("article h2")].filter(h => /^\\d\\./.test(h.textContent)).map(h => {
    const items = [];
    for (let n = h.nextElementSibling; n && n.tagName !== "H2"; n = n.nextElementSibling) items.push(n);
    const link = items.map(n => n.querySelector("a[href*='#kv-']")).find(Boolean);
    const answer = items.find(n => n.matches("details"));
    return {title: h.textContent, href: link && link.href, values: answer ? [...answer.querySelectorAll(".kv-value")].map(v => v.textContent) : []};
})"""


def test_each_exercise_opens_its_widget_on_its_numbers_and_the_widget_gives_the_answer(warm_page, site_url):
    page = warm_page
    page.goto(site_url + "teach/")
    exercises = page.evaluate(ANSWERS_JS)
    assert len(exercises) == 5, exercises
    for ex in exercises:
        assert ex["href"] and ex["values"], ex
        page.goto(ex["href"])
        root = page.locator(f"#{ex['href'].split('#')[1]}")
        expect(root).to_have_attribute("data-mounted", "true")
        expect(root.locator(".kv-link")).to_have_count(0)  # every setting of the link is one the widget takes
        if root.get_attribute("data-activated") != "true":
            root.evaluate("r => r.kvActivate(true)")
        wait_ready(root)
        shown = root.inner_text() + root.text_content()
        missing = [v for v in ex["values"] if not re.search(rf"(?<![\w,.]){re.escape(v)}(?![\w,]|\.\d)", shown)]
        assert missing == [], f"{ex['title']}: the widget does not show {missing}"
