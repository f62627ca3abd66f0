"""The package's layout: an acyclic import graph whose edges only run down the layers.

The layer map is written once, in the package docstring of `agui` (where a reader looks
first), and read from there: each numbered item is a layer, bottom first, and the backticked
module names in it are the modules it holds. A public package named there holds everything
under it; a private package holds only itself, so each of its modules is named in the map
(a new private module is placed by hand, never by a pattern).

The graph is read from the source with `ast`, so it counts every import: module level,
`if TYPE_CHECKING:` blocks and imports inside functions alike (a cycle that only a lazy import
hides is still a cycle a reader has to untangle). Importing `a.b.c` runs the `__init__` of `a.b`
first, so an import is also an edge to each package above the imported module, except the
importer's own packages (they are already running). No production module imports the testing
kit, and none imports from the facade: every name is imported from its home module. The one
exception is `__version__`, a constant the facade defines.
"""

from __future__ import annotations

import ast
import itertools
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import agui

PACKAGE_DIR = Path(agui.__file__).parent


def _layer_map(doc: str) -> list[tuple[str, list[str]]]:
    """The layers of a docstring's map: `N. name: ...` items and the modules they name."""
    items = re.findall(
        r"^(\d+)\. ([^:\n]+): (.*?)(?=^\d+\. |^\S|\Z)", doc, re.MULTILINE | re.DOTALL
    )
    return [(name, re.findall(r"`(agui(?:\.\w+)*)`", body)) for _, name, body in items]


LAYERS = _layer_map(agui.__doc__ or "")
"""Each layer's name and modules, bottom first, as the package docstring draws them."""


OPTIONAL_LAYERS = (
    "agui.testing",
    "agui.client",
    "agui.agents",
    "agui.runs",
    "agui.bridges",
    "ag_ui",
    "httpx",
    "uvicorn",
    "google",
    "redis",
    "openai",
    "anthropic",
    "pydantic_ai",
    "agents",
    "langgraph",
    "langchain_core",
)
"""What `import agui` must not load: the testing kit, the client, the tool loop, the run logs,
the bridges, and the optional dependencies (httpx for the client, uvicorn for serving, protobuf
for the binding, redis for the Redis run log, the model SDKs for their models, the frameworks
the bridges serve and the official `ag_ui` models)."""


def _modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Every module under `root`, by dotted name, with its file and whether it is a package."""
    found: dict[str, tuple[Path, bool]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts)] = (path, is_package)
    return found


def _imported(source: str, module: str, *, is_package: bool, known: set[str]) -> set[str]:
    """The modules of `known` that `source` imports anywhere, type-only and lazy imports too."""

    def home(name: str) -> str:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name

    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(home(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                if base == "agui" and alias.name == "__version__":
                    continue  # a constant of the facade (see the module docstring)
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in known else home(base))
    found.discard("")
    found.discard(module)
    return found


def _with_packages(module: str, imported: set[str]) -> set[str]:
    """Add the packages whose `__init__` runs first, except the importer's own."""
    edges = set(imported)
    for name in imported:
        parts = name.split(".")
        edges.update(".".join(parts[:end]) for end in range(2, len(parts)))
    return {name for name in edges if name != module and not module.startswith(name + ".")}


def _graph(root: Path) -> dict[str, set[str]]:
    modules = _modules(root)
    known = set(modules)
    return {
        module: _with_packages(
            module, _imported(path.read_text(), module, is_package=is_package, known=known)
        )
        for module, (path, is_package) in modules.items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    counter = itertools.count()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = next(counter)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while not component or component[-1] != node:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _placed(layers: list[tuple[str, list[str]]]) -> dict[str, int]:
    """Each module the map names, with its layer's number; no module twice."""
    placed: dict[str, int] = {}
    for number, (_, modules) in enumerate(layers):
        for module in modules:
            assert module not in placed, f"{module} is placed twice in the layer map"
            placed[module] = number
    return placed


def _layer_in(placed: dict[str, int], module: str) -> int | None:
    """The module's layer: its own entry, or the nearest public package above it that has one.

    A private package (a name part starting with `_`) holds only itself, and the facade `agui`
    only itself, so a module under either must be named.
    """
    if module in placed:
        return placed[module]
    package = module.rpartition(".")[0]
    while package.count("."):
        if package.rpartition(".")[2].startswith("_"):
            return None
        if package in placed:
            return placed[package]
        package = package.rpartition(".")[0]
    return None


def _layer(module: str) -> int | None:
    return _layer_in(PLACED, module)


PLACED = _placed(LAYERS)
GRAPH = _graph(PACKAGE_DIR)
MODULES = _modules(PACKAGE_DIR)


# -- the graph reader ------------------------------------------------------------------------


def test_the_reader_counts_type_only_lazy_and_relative_imports() -> None:
    source = textwrap.dedent(
        """
        from typing import TYPE_CHECKING
        from agui.events import Event
        from agui import patch
        from . import _xml
        if TYPE_CHECKING:
            from agui.context import RunContext
        def later() -> None:
            import agui.sse
        """
    )
    known = {"agui", "agui.events", "agui.patch", "agui.context", "agui.sse", "agui.agents._xml"}

    found = _imported(source, "agui.agents.loop", is_package=False, known=known)

    assert found == {"agui.events", "agui.patch", "agui.agents._xml", "agui.context", "agui.sse"}


def test_the_cycle_finder_finds_a_cycle_and_only_the_modules_on_it() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_an_import_runs_the_packages_above_the_module_but_not_the_importers_own() -> None:
    edges = _with_packages(
        "agui.agents.models.scripted", {"agui.agents._xml", "agui.verify._ledger"}
    )

    assert edges == {"agui.agents._xml", "agui.verify._ledger", "agui.verify"}


def test_the_version_is_the_one_name_that_may_come_from_the_facade() -> None:
    source = "from agui import __version__\nfrom agui import RunContext\n"

    found = _imported(source, "agui.cli._main", is_package=False, known={"agui", "agui.cli._main"})

    assert found == {"agui"}
    assert (
        _imported(
            "from agui import __version__\n",
            "agui.cli",
            is_package=True,
            known={"agui", "agui.cli"},
        )
        == set()
    )


def test_the_map_reader_takes_each_numbered_layer_and_its_backticked_modules() -> None:
    doc = textwrap.dedent(
        """
        A package.

        1. errors: `agui._util`, `agui._util.words`,
           `agui.errors`. The exception tree.
        2. the run: `agui.context`, `agui.handles`. It runs.

        Examples:
            >>> 1
        """
    )

    layers = _layer_map(doc)

    assert layers == [
        ("errors", ["agui._util", "agui._util.words", "agui.errors"]),
        ("the run", ["agui.context", "agui.handles"]),
    ]


def test_a_public_package_places_its_modules_and_a_private_one_only_itself() -> None:
    placed = _placed([("low", ["agui._emit", "agui._emit.record"]), ("run", ["agui.handles"])])

    assert _layer_in(placed, "agui.handles._message") == 1
    assert _layer_in(placed, "agui._emit.record") == 0
    assert _layer_in(placed, "agui._emit.pipeline") is None
    assert _layer_in(placed, "agui._emit.deep.module") is None
    assert _layer_in(placed, "agui.sse") is None


def test_a_module_placed_twice_is_refused() -> None:
    with pytest.raises(AssertionError, match=r"agui\.sse is placed twice"):
        _placed([("a", ["agui.sse"]), ("b", ["agui.sse"])])


def test_the_map_has_the_layers_bottom_first() -> None:
    assert [name for name, _ in LAYERS] == [
        "errors",
        "wire models",
        "reading and checking",
        "the run",
        "encoding",
        "agents",
        "run logs",
        "HTTP",
        "consumers",
        "bridges",
        "command line",
        "facade",
    ]


# -- the rules -------------------------------------------------------------------------------


def test_every_module_is_placed_in_a_layer() -> None:
    assert [module for module in GRAPH if _layer(module) is None] == []


def test_every_entry_of_the_layer_map_names_a_module() -> None:
    assert [module for module in PLACED if module not in GRAPH] == []


def test_the_import_graph_has_no_cycle() -> None:
    cycles = _cycles(GRAPH)

    assert cycles == [], "import cycles (type-only and lazy imports included): " + "; ".join(
        " <-> ".join(cycle) for cycle in cycles
    )


def test_no_import_runs_up_the_layers() -> None:
    upward = [
        f"{module} ({LAYERS[_layer(module) or 0][0]}) imports {target} "
        f"({LAYERS[_layer(target) or 0][0]})"
        for module, targets in sorted(GRAPH.items())
        for target in sorted(targets)
        if (_layer(target) or 0) > (_layer(module) or 0)
    ]

    assert upward == []


def test_no_production_module_imports_the_testing_kit() -> None:
    importers = sorted(module for module, targets in GRAPH.items() if "agui.testing" in targets)

    assert importers == ["agui"]  # the facade's lazy `agui.testing`, for type checkers only


def test_no_production_module_imports_names_from_the_facade() -> None:
    assert sorted(module for module, targets in GRAPH.items() if "agui" in targets) == []


@pytest.mark.parametrize("module", OPTIONAL_LAYERS)
def test_import_agui_does_not_load_the_optional_layers(module: str) -> None:
    prefix = module + "."
    code = (
        "import sys, agui; "
        f"print(sorted(m for m in sys.modules if m == {module!r} or m.startswith({prefix!r})))"
    )

    loaded = subprocess.run(  # noqa: S603 - this interpreter, on a fixed program
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()

    assert loaded == "[]"


MODULE_LINES = 440
"""The house budget, "about 400 lines" a module, with the slack the word "about" gives."""

LONGER_MODULES = {
    "agui.events": "the 31 event models of AG-UI 1.0, one class each, in the protocol's order",
    "agui.errors": "the one exception tree: every error and warning agui raises, documented",
}
"""Modules allowed past the budget, each with its reason: vocabularies, not logic."""


def test_every_module_stays_within_the_house_budget_of_lines() -> None:
    long = {
        module: len(path.read_text(encoding="utf-8").splitlines())
        for module, (path, _) in MODULES.items()
        if module not in LONGER_MODULES
    }

    assert {module: lines for module, lines in long.items() if lines > MODULE_LINES} == {}


def test_the_modules_allowed_past_the_budget_exist() -> None:
    assert set(LONGER_MODULES) <= set(MODULES)
