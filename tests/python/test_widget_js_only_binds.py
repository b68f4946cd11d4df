"""JS only binds (issue 41): a widget's numbers, sentences, status line and hovers are written by its
Python view (pycode/kvlab/widgets/<page>.py), and its widget.js binds them (kvlab.kit.bind, Plotly's
hovertext, kvlab.kit.raster's runs and tooltips). Here, every widget.js is read for what would be a
display string made in the browser:

- a number formatted: .toFixed, .toPrecision, .toLocaleString, Intl.NumberFormat, kvlab.kit.fixed, or
  a d3 format in a hover or text template ("%{y:.3s}");
- a sentence built: a template literal that puts values between words (`step ${row}, position ${x}`),
  or a quoted text with a space in it joined to a value with + ("chat " + n).

Fixed words (an axis title, a trace's name, a notice) are not built, and pass. The model widgets are
the documented exception (docs/design.md, "The model widgets ... are the one exception"): their
numbers are measured in the browser by the tiny model, and each has a JS view that
tests/browser/test_model_js_parity.py holds equal to its Python twin. What else the browser says of
its own (a file it could not read, a download under way, a model run's progress) is listed in ALLOWED
with why; anything new fails.
"""

from __future__ import annotations

import re

import pytest

from tests.python.widget_calls import WIDGETS

# docs/design.md: their live numbers come from the tiny model in the browser (onnxruntime-web)
MODEL_WIDGETS = {
    "next-token": "the model's next-token probabilities, measured in the browser; JS view twin of next_token_view",
    "generate": "the model's tokens and step times (ms measured in the browser, and their sum in the status line); "
    "JS view twin of generate_view",
    "model-attention": "the model's attention weights, computed in the browser; JS display twin",
    "model-race": "the race's progress and its measured step times, before kvlab.race_measured words them",
}
# (widget, the text as written, interpolations as ${}): why the browser writes it
ALLOWED = {
    ("attention", "Number(v).toFixed(1)"): "the temperature slider's own value, echoed while it moves (ctx.form echo)",
    ("engine-log", "Could not read this log: ${}."): "the browser's own error reading a file the reader dropped",
    ("kv-memory", "Could not read this config.json: ${}."): "the browser's own error reading a file",
    ("kv-memory", "Fetching ${}'s config.json and index from the Hub…"): "a download under way, before any result",
    ("kv-quant", "Generating ${} tokens with an fp32 cache…"): "the tiny model's run in the browser, under way",
    ("kv-quant", "Reading the same text with a ${} cache…"): "the tiny model's run in the browser, under way",
    ("kv-quant", "Door-code chat ${} of ${}, ${} cache…"): "the tiny model's run in the browser, under way",
    ("kv-quant", "Measured in your browser: ${} cache formats, ${} door-code chats."): "what the tiny model ran in "
    "the browser, said when kvlab.kv_quant_table has worded the table",
    ("model-eviction", "Reading the chat with the ${}…"): "the tiny model's run in the browser, under way",
    ("model-eviction", "Reading the chat with the ${}: token ${} of ${}…"): "the tiny model's run, under way",
    ("model-eviction", "extra loss (mean of ${})"): "a chart's axis title naming a setting of the score",
    ("model-eviction", "${}user: ${}\\nbot:"): "the chat as the model reads it (its prompt), not words for the reader",
    (
        "model-eviction",
        "${}user: ${}\\nbot:${}\\n",
    ): "the chat box's text after the model's reply, the model's own words",
}

NUMBER_FORMAT = re.compile(
    r"[\w$.]*(?:\([\w$.]*\))?\.(?:toFixed|toPrecision|toLocaleString)\([^()]*\)|\bIntl\.NumberFormat\b|\bkit\.fixed\([^()]*\)"
)
D3_FORMAT = re.compile(r"%\{[\w.\[\]]+:[^}]*\}")
WORDS = re.compile(r"[A-Za-z]{3,}")


def literals(js: str) -> tuple[list[tuple[str, str, str, str]], str]:
    """The string and template literals of a script: (kind, text with each ${...} as ${}, code just
    before, code just after), and the code with comments and literals taken out."""
    out: list[tuple[str, str, str, str]] = []
    code: list[str] = []
    i, n = 0, len(js)

    def read_template(i: int) -> tuple[str, int]:  # js[i] is the opening `
        text, i = [], i + 1
        while i < n and js[i] != "`":
            if js[i] == "\\":
                text.append(js[i : i + 2])
                i += 2
            elif js.startswith("${", i):
                depth, i = 1, i + 2
                while i < n and depth:  # the expression, with its own literals (read and recorded too)
                    if js[i] in "\"'`":
                        i = read_literal(i)
                        continue
                    depth += {"{": 1, "}": -1}.get(js[i], 0)
                    i += 1
                text.append("${}")
            else:
                text.append(js[i])
                i += 1
        return "".join(text), i + 1

    def read_literal(i: int) -> int:
        start = i
        if js[i] == "`":
            text, i = read_template(i)
            kind = "template"
        else:
            quote, i = js[i], i + 1
            while i < n and js[i] != quote:
                i += 2 if js[i] == "\\" else 1
            text, i, kind = js[start + 1 : i], i + 1, "string"
        out.append((kind, text, js[max(0, start - 3) : start], js[i : i + 3]))
        return i

    while i < n:
        c = js[i]
        if js.startswith("//", i):
            i = js.find("\n", i) if "\n" in js[i:] else n
        elif js.startswith("/*", i):
            i = js.index("*/", i) + 2
        elif c == "/" and re.search(r"[(,=:\[!&|?{};]\s*$", "".join(code[-3:])):  # a regular expression
            j = i + 1
            while j < n and js[j] != "/":
                j += 2 if js[j] == "\\" else 1
            i = j + 1
        elif c in "\"'`":
            i = read_literal(i)
            code.append(" 0 ")
        else:
            code.append(c)
            i += 1
    return out, "".join(code)


def display_strings(js: str) -> list[str]:
    """What a widget.js formats or builds for the reader (the module's docstring says what counts)."""
    found: list[str] = []
    lits, code = literals(js)
    found += [m.group(0) for m in NUMBER_FORMAT.finditer(code)]
    for kind, text, before, after in lits:
        if D3_FORMAT.search(text):
            found.append(text)
        elif kind == "template" and "${}" in text and re.search(r"\s", text) and WORDS.search(text.replace("${}", " ")):
            found.append(text)
        elif kind == "string" and re.search(r"\s", text) and WORDS.search(text) and ("+" in before or "+" in after):
            found.append(text)
    return found


@pytest.mark.parametrize("name", sorted(p.name for p in WIDGETS.iterdir() if (p / "widget.js").is_file()))
def test_widget_js_formats_no_number_and_builds_no_sentence(name):
    if name in MODEL_WIDGETS:
        return
    js = (WIDGETS / name / "widget.js").read_text(encoding="utf-8")
    found = display_strings(js)
    allowed = {text for (widget, text) in ALLOWED if widget == name}
    new = [f for f in found if f not in allowed]
    assert not new, (
        f"{name}/widget.js formats or writes display text of its own: {new}. Write it in the widget's Python view "
        "(pycode/kvlab/widgets/<page>.py) and bind it; or, where the browser alone knows it, name it in ALLOWED with why"
    )


def test_every_allowed_text_is_still_there():
    for widget, text in ALLOWED:
        js = (WIDGETS / widget / "widget.js").read_text(encoding="utf-8")
        assert text in display_strings(js), (widget, text, "is gone: take it out of ALLOWED")
    assert set(MODEL_WIDGETS) <= {p.name for p in WIDGETS.iterdir()}


def test_the_checker_sees_a_sentence_or_a_format_made_in_js():
    assert display_strings("title: (r, a, b, v) => `step ${r}, positions ${a}–${b}: ${cells[v]}`,")
    assert display_strings("el.textContent = `chat ${rows[r] + 1}: ${states[v]}`;")
    assert display_strings('el.textContent = "chat " + (n + 1);')
    assert display_strings("cell.textContent = x.toFixed(2);")
    assert display_strings("const s = kvlab.kit.fixed(ms, 0);")
    assert display_strings('hovertemplate: "%{x}: %{y:.3s}<extra></extra>"')
    assert not display_strings(
        'root.querySelector(`[data-action="${action}"]`); scope.dataset.bindScope = `queries.${i}`;'
    )
    assert not display_strings(
        'hovertemplate: "%{hovertext}<extra>" + p.name + "</extra>", yaxis: {title: {text: "ms (log scale)"}}'
    )
    assert not display_strings(
        "grid.style.setProperty('--pace', pace() + 'ms'); // a comment `with ${a} sentence` here"
    )
    assert not display_strings('kit.raster(raster, data.view.raster, { prefix: "kv-sim" });')
