"""A link's settings, drawn at random (hypothesis), into every widget of a page (issue 38).

kvlab.applyQueryParams (embed.js) reads `?name=value` for embeds and content pages. Whatever
the address holds, it must not throw, must leave every control with a value the control
takes (a number within its min and max, a choice among its options), must name each ignored
key once, and must not repeat a long value in full in what it reports.
"""

from __future__ import annotations

from urllib.parse import urlencode

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# the controls' real names (a link that mostly hits them), and names no widget has
NAMES = [
    "model",
    "gpu",
    "context",
    "n_seq",
    "gpu_memory_utilization",
    "block_size",
    "kv",
    "mode",
    "weights",
    "log",
    "settings",
    "example",
    "prefix_tokens",
    "requests_per_second",
    "zipf",
    "seed",
    "d",
    "temperature",
    "causal",
    "nosuch",
    "__proto__",
    "constructor",
    "toString",
    "",
    "a.b",
    "kv-memory.context",
]
NUMBERS = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["0x10", "1e3", " 5", "", "-0", "00012", "1.", ".5", "5" * 5000, "NaN", "Infinity"]),
)
TEXT = st.text(max_size=40) | st.sampled_from(
    ["<img src=x onerror=alert(1)>", "true", "false", "\x1b[1;36m", "x" * 3000]
)
PAIRS = st.lists(st.tuples(st.sampled_from(NAMES) | st.text(max_size=12), NUMBERS | TEXT), max_size=8)

CHECK_JS = """search => {
    const out = [];
    for (const root of document.querySelectorAll("[data-widget]")) {
        const form = root.querySelector("form.kv-controls");
        if (!form) continue;
        const told = kvlab.applyQueryParams(root, search);
        for (const el of form.elements) {
            if (!el.name || el.disabled) continue;
            if (el.type === "number" || el.type === "range") {
                const v = Number(el.value);
                if (el.value === "" || !Number.isFinite(v)) out.push(`${root.dataset.widget}.${el.name}: ${el.value}`);
                if (el.min !== "" && v < Number(el.min)) out.push(`${root.dataset.widget}.${el.name} ${v} < min`);
                if (el.max !== "" && v > Number(el.max)) out.push(`${root.dataset.widget}.${el.name} ${v} > max`);
            } else if (el.tagName === "SELECT" && ![...el.options].some((o) => o.value === el.value)) {
                out.push(`${root.dataset.widget}.${el.name}: ${el.value} is no option`);
            }
        }
        const named = [...told.unknown, ...told.invalid];
        if (new Set(named).size !== named.length) out.push(`${root.dataset.widget}: a key named twice ${named}`);
        for (const line of told.clamped) if (line.length > 200) out.push(`${root.dataset.widget}: ${line.slice(0, 80)}…`);
    }
    return out;
}"""


def test_any_link_leaves_every_control_with_a_value_it_takes(warm_page, site_url):
    page = warm_page
    page.goto(site_url + "memory/")  # gpu-fit, kv-memory, engine-log, kv-quant: numbers, choices, texts
    assert page.locator("[data-widget] form.kv-controls").count() >= 3

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(PAIRS)
    def check(pairs):
        problems = page.evaluate(CHECK_JS, "?" + urlencode(pairs))
        assert problems == [], problems

    check()
    assert page.evaluate("({}).polluted === undefined && Object.prototype.toString.call([]) === '[object Array]'")
