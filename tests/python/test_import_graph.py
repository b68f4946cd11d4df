"""kvlab's import graph, read with `ast` (no module is imported): layered, acyclic, no private names.

Layers, lowest first; a module imports only from its own layer or a lower one:

    leaf     kvlab.dtypes, kvlab.wording, kvlab.inputs   (tables, words, input checks; no kvlab import
                                                          but each other)
    core     kvlab.core.*                                (the numpy maths)
    memory   kvlab.memory.*                              (architectures, configs, the calculators)
    reuse    kvlab.reuse.*                               (prefix caching, eviction, context shift)
    widgets  kvlab.widgets.*                             (what each page calls; resolves models)
    edges    kvlab (the lazy registry), kvlab.bridge, kvlab.cli, kvlab.__main__

Also checked: no import cycle (imports under `if TYPE_CHECKING:` included), no `from kvlab.x import
_name` and no `module._name` across modules, and no import inside a function unless ALLOWED says
why. Models are resolved (catalogue.model_architecture) at the top of each public entry point; the
helpers beneath take an Architecture.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pycode" / "kvlab"

LAYERS = (
    ("leaf", ("kvlab.dtypes", "kvlab.wording", "kvlab.inputs", "kvlab.input_files")),
    ("core", ("kvlab.core",)),
    ("memory", ("kvlab.memory",)),
    ("reuse", ("kvlab.reuse",)),
    ("widgets", ("kvlab.widgets",)),
    ("edges", ("kvlab", "kvlab.bridge", "kvlab.cli", "kvlab.__main__")),
)

# (module, function) -> why its import waits for the call
ALLOWED = {
    ("kvlab.core.tiny", "tiny_tokenizer"): "the tokenizer's module loads only when a widget first tokenizes",
    ("kvlab.core.tiny", "model_and_tokenizer"): (
        "the numpy GPT (kvlab.core.gpt) loads only when a widget first runs the tiny model, "
        "not for the pages' first widgets (attention_figure, the cache figures)"
    ),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> int:
    """The layer of a module: its longest matching prefix in LAYERS."""
    best, rank = -1, None
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    assert rank is not None, f"{module} is in no layer: add it to LAYERS"
    return rank


def absolute(module: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not MODULES[module].name == "__init__.py":
        base = base[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class Imports(ast.NodeVisitor):
    """Every kvlab import of one module: (target module, names, enclosing function or None, type-only)."""

    def __init__(self, module: str):
        self.module = module
        self.found: list[tuple[str, list[str], str | None, bool, int]] = []
        self.function: str | None = None
        self.type_only = False
        self.aliases: dict[str, str] = {}  # local name -> kvlab module it is bound to
        self.private_uses: list[str] = []

    def visit_FunctionDef(self, node):
        outer, self.function = self.function, self.function or node.name
        self.generic_visit(node)
        self.function = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_If(self, node):
        if is_type_checking(node):
            outer, self.type_only = self.type_only, True
            for child in node.body:
                self.visit(child)
            self.type_only = outer
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def add(self, target: str, names: list[str], lineno: int):
        if target == "kvlab" or target.startswith("kvlab."):
            self.found.append((target, names, self.function, self.type_only, lineno))

    def visit_Import(self, node):
        for alias in node.names:
            self.add(alias.name, [], node.lineno)
            if alias.name.startswith("kvlab"):
                self.aliases[alias.asname or alias.name] = alias.name

    def visit_ImportFrom(self, node):
        target = absolute(self.module, node)
        for alias in node.names:
            sub = f"{target}.{alias.name}"
            if sub in MODULES:  # `from kvlab.core import tiny`: the module kvlab.core.tiny
                self.add(sub, [], node.lineno)
                self.aliases[alias.asname or alias.name] = sub
            else:
                self.add(target, [alias.name], node.lineno)

    def visit_Attribute(self, node):
        if (
            isinstance(node.value, ast.Name)
            and node.value.id in self.aliases
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            self.private_uses.append(f"{self.module}:{node.lineno} uses {self.aliases[node.value.id]}.{node.attr}")
        self.generic_visit(node)


def scan() -> dict[str, Imports]:
    out = {}
    for module, path in MODULES.items():
        visitor = Imports(module)
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        out[module] = visitor
    return out


SCAN = scan()


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, v in SCAN.items():
        for target, _, _, _, _ in v.found:
            if target in MODULES and target != module:
                edges[module].add(target)
    return edges


def test_every_module_is_in_a_layer_and_the_scan_sees_kvlab_imports():
    for module in MODULES:
        layer(module)
    assert ("kvlab.memory.architecture") in graph()["kvlab.memory.kv_bytes"]
    assert "kvlab.core.tiny" in graph()["kvlab.widgets.tokens"]  # `from kvlab.core import tiny`


def test_no_import_cycle():
    edges = graph()
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []
    cycles = []

    def visit(m: str):
        state[m] = 1
        path.append(m)
        for t in sorted(edges[m]):
            if state.get(t) == 1:
                cycles.append(path[path.index(t) :] + [t])
            elif t not in state:
                visit(t)
        path.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)
    assert cycles == [], " ; ".join(" -> ".join(c) for c in cycles)


def test_no_upward_import():
    upward = [
        f"{module}:{line} ({LAYERS[layer(module)][0]}) imports {target} ({LAYERS[layer(target)][0]})"
        for module, v in SCAN.items()
        for target, _, _, _, line in v.found
        if layer(target) > layer(module)
    ]
    assert upward == []


def test_no_private_name_crosses_a_module():
    private = [
        f"{module}:{line} imports {target}.{name}"
        for module, v in SCAN.items()
        for target, names, _, _, line in v.found
        for name in names
        if target != module and name.startswith("_") and not name.startswith("__")
    ]
    private += [use for v in SCAN.values() for use in v.private_uses]
    assert private == []


def test_imports_inside_functions_are_the_allowed_lazy_ones():
    local = {
        (module, function): f"{module}:{line} {function}() imports {target}"
        for module, v in SCAN.items()
        for target, _, function, _, line in v.found
        if function is not None
    }
    assert sorted(set(local) - set(ALLOWED)) == [], [local[k] for k in sorted(set(local) - set(ALLOWED))]
    assert sorted(set(ALLOWED) - set(local)) == [], "ALLOWED names a lazy import that is gone: drop it"


@pytest.mark.parametrize("module", ["kvlab.widgets.memory", "kvlab.widgets.serving", "kvlab.widgets.wall"])
def test_result_types_are_imported_for_type_checking_only(module):
    runtime = [t for t, _, _, type_only, _ in SCAN[module].found if t.endswith("_types") and not type_only]
    assert runtime == []


def test_the_core_and_the_calculators_take_architectures_not_ids():
    """Only public entry points resolve a model; the numpy core and the vLLM engine model never do."""
    for module in ("kvlab.core.kv_quant", "kvlab.memory.engines", "kvlab.memory.architecture"):
        assert "kvlab.memory.catalogue" not in graph()[module], module
