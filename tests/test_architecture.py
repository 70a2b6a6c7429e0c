"""The layering of the Python package: no import cycles, and only the command line
brings scenarios, sweeps and reports together. Checked on the source files with ``ast``,
so it needs neither the extension nor an install."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from .conftest import REPO

PACKAGE = REPO / "python" / "dcnsim"
REPORTS = "dcnsim.reports"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))
            if "scenarios" not in p.relative_to(PACKAGE).parts}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under ``node`` (module level, in functions and classes),
    except the bodies of ``if TYPE_CHECKING:``, which never run."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield from _imports_of_statement(other)
        else:
            yield from _imports(child)


def _imports_of_statement(stmt: ast.stmt) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        yield stmt
    else:
        yield from _imports(stmt)


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom,
             known: set[str]) -> set[str]:
    """The package's modules that an import statement of ``module`` loads by name."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
        return {_longest_known(name, known) for name in names} - {""}
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    found = set()
    for alias in node.names:
        submodule = f"{source}.{alias.name}"
        found.add(submodule if submodule in known else _longest_known(source, known))
    return found - {""}


def _longest_known(name: str, known: set[str]) -> str:
    parts = name.split(".")
    while parts and ".".join(parts) not in known:
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (TYPE_CHECKING imports left out)."""
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in _imports(tree):
            edges |= _targets(name, is_package, node, known)
        graph[name] = edges - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first repeated at the end), or None."""
    done: set[str] = set()
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        if node in stack:
            return stack[stack.index(node):] + [node]
        if node in done:
            return None
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            cycle = visit(target)
            if cycle:
                return cycle
        stack.pop()
        done.add(node)
        return None

    for start in sorted(graph):
        cycle = visit(start)
        if cycle:
            return cycle
    return None


def test_graph_sees_function_level_imports() -> None:
    graph = import_graph()
    assert "dcnsim._native" in graph["dcnsim.scenario"]  # module level
    assert {"dcnsim.scenario", "dcnsim.sweep", "dcnsim.reports"} <= graph["dcnsim.cli"]
    cyclic = {"a": {"b"}, "b": {"c"}, "c": {"a"}}
    assert find_cycle(cyclic) == ["a", "b", "c", "a"]


def test_no_import_cycles() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def _reaches_reports(edges: set[str]) -> bool:
    return any(t == REPORTS or t.startswith(REPORTS + ".") for t in edges)


def test_only_the_cli_imports_scenario_sweep_and_reports_together() -> None:
    graph = import_graph()
    together = sorted(name for name, edges in graph.items()
                      if {"dcnsim.scenario", "dcnsim.sweep"} <= edges and _reaches_reports(edges))
    assert together == ["dcnsim.cli"]


def test_layers() -> None:
    """scenario knows nothing of runs, sweeps or reports; runs and sweep know no reports."""
    graph = import_graph()
    above_scenario = {"dcnsim.runs", "dcnsim.sweep", "dcnsim.cli", "dcnsim.api", "dcnsim"}
    assert not graph["dcnsim.scenario"] & above_scenario
    assert not _reaches_reports(graph["dcnsim.scenario"])
    for name in ("dcnsim.runs", "dcnsim.sweep"):
        assert not _reaches_reports(graph[name]), name
        assert "dcnsim.cli" not in graph[name]
    assert "dcnsim.sweep" not in graph["dcnsim.runs"]
    for name, edges in graph.items():
        if name.startswith(REPORTS):
            assert not edges & {"dcnsim.sweep", "dcnsim.cli", "dcnsim.api"}, name


def test_plotting_libraries_load_only_when_a_report_draws() -> None:
    """Loading the command line, scenarios and reports imports neither matplotlib nor pandas
    (``dcnsim run`` and the checks must not pay for them)."""
    import dcnsim

    code = ("import sys, dcnsim.cli, dcnsim.reports; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'matplotlib', 'pandas'}))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(dcnsim.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env).stdout
    assert out.strip() == "[]"

