"""The package's layout: an acyclic import graph whose edges only run down the layers.

Data flows one way through agui: a run input is read (`wire`), a run context drives the agent and
sends its events through the pipeline (transformers, verifier, sink), an encoder turns them into
SSE or protobuf, and the HTTP layer sends them. The import graph must show the same direction:
a module imports only from its own layer or the layers under it, and nothing imports its way
back up. The layers, bottom first:

1. errors: the exception tree, and the rule names it refers to.
2. wire models: the pydantic models of events, messages, run input and capabilities, and the
   queue records (an event kept compact until it is read).
3. reading and checking: JSON in (`wire`), JSON Patch, the ordering verifier, and the fold (a
   stream applied as a client applies it). None of them runs anything.
4. the run: the context and its handles, the pipeline (transformers, verifier, sink),
   cancellation, state publishing and the run driver.
5. encoding: SSE and the protobuf binding, which read what the run produced.
6. agents: the tool loop and its models, built on the run context alone; they need no encoder,
   and no HTTP layer needs them, so they sit above the run and below the endpoint.
7. run logs: where durable runs keep their frames, leases and threads (`agui.runs`), written
   as encoded frames and folded; the endpoint uses them, they know nothing of HTTP.
8. HTTP: the ASGI endpoint (admission, streaming, the inspector page).
9. consumers: the client and the testing kit, which drive or read the layers below.
10. the command line, which uses all of the above.
11. the facade, `agui/__init__.py`, which re-exports the core.

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
import fnmatch
import itertools
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import agui

PACKAGE_DIR = Path(agui.__file__).parent

LAYERS: list[tuple[str, list[str]]] = [
    ("errors", ["agui._numbers", "agui._rules", "agui._tasks", "agui._wording", "agui.errors"]),
    (
        "wire models",
        [
            "agui._model",
            "agui.messages",
            "agui.types",
            "agui.events",
            "agui._record",
            "agui.capabilities",
        ],
    ),
    (
        "reading and checking",
        [
            "agui._json_value",
            "agui._json_text",
            "agui._nulls",
            "agui.wire",
            "agui.patch",
            "agui.patch.*",
            "agui.verify",
            "agui.verify.*",
            "agui.fold",
            "agui._message_thread",
            "agui._chunk_lanes",
        ],
    ),
    (
        "the run",
        [
            "agui._*",  # the pipeline; `_rules`, `_model`, `_record`, `_message_thread` are below
            "agui.cancellation",
            "agui.transform",
            "agui.sink",
            "agui.state",
            "agui.context",
            "agui.handles",
            "agui.handles.*",
            "agui.runner",
        ],
    ),
    ("encoding", ["agui.sse", "agui.proto", "agui.proto.*"]),
    ("agents", ["agui.agents", "agui.agents.*"]),
    ("run logs", ["agui.runs", "agui.runs.*"]),
    ("HTTP", ["agui.asgi", "agui.asgi.*"]),
    ("consumers", ["agui.client", "agui.client.*", "agui.testing"]),
    ("command line", ["agui.cli", "agui.cli.*"]),
    ("facade", ["agui"]),
]
"""Each layer's modules, as `fnmatch` patterns; a new module must be placed in one."""

OPTIONAL_LAYERS = (
    "agui.testing",
    "agui.client",
    "agui.agents",
    "agui.runs",
    "httpx",
    "uvicorn",
    "google",
    "redis",
    "openai",
    "anthropic",
)
"""What `import agui` must not load: the testing kit, the client, the tool loop, the run logs,
and the optional dependencies (httpx for the client, uvicorn for serving, protobuf for the
binding, redis for the Redis run log, the model SDKs for their models)."""


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


def _layer(module: str) -> int | None:
    for number, (_, patterns) in enumerate(LAYERS):
        if any(fnmatch.fnmatchcase(module, pattern) for pattern in patterns):
            return number
    return None


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


# -- the rules -------------------------------------------------------------------------------


def test_every_module_is_placed_in_a_layer() -> None:
    assert [module for module in GRAPH if _layer(module) is None] == []


def test_every_entry_of_the_layer_table_names_a_module() -> None:
    stale = [
        pattern
        for _, patterns in LAYERS
        for pattern in patterns
        if not any(fnmatch.fnmatchcase(module, pattern) for module in GRAPH)
    ]

    assert stale == []


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
