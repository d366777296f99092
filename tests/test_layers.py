"""The Python package is layered by where its code runs, and imports flow one way
(docs/architecture.md): base modules, then ``executor``, ``scan``, ``update``, ``table``,
``catalog``, and ``spark``/``cli`` on top. These tests read every module's imports (at module
level and inside functions) and check the order, that there is no circle, and that importing
the executor modules in a fresh interpreter loads no driver code."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "icefloe"

# the rank of each part of the package: a module may import modules of its own rank or lower
LAYERS = [
    ("base", ["_native", "_log", "_time", "errors", "expressions", "transforms", "manifest"]),
    ("executor", ["executor"]),
    ("scan", ["scan"]),
    ("update", ["update"]),
    ("table", ["table"]),
    ("catalog", ["catalog"]),
    ("top", ["spark", "cli"]),
]
# the package root (lazy re-exports) and the deprecated aliases of moved modules stand above
# everything: nothing inside the package may import them
FACADES = {"icefloe", "icefloe.reader", "icefloe.writer", "icefloe.deletes", "icefloe.commit"}
FACADES |= {"icefloe.snapshots", "icefloe.row_deletes"}
DRIVER_PREFIXES = ("icefloe.scan", "icefloe.update", "icefloe.table", "icefloe.catalog", "icefloe.spark")


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _rank(module: str) -> int:
    first = module.split(".")[1] if "." in module else ""
    for i, (_, parts) in enumerate(LAYERS):
        if first in parts:
            return i
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")


def _type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def _imports(module: str, path: Path) -> list[tuple[str, int, bool]]:
    """(imported icefloe module, line, inside a function) for every import in the file;
    imports under ``if TYPE_CHECKING:`` included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            local = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.split(".")[0] == "icefloe":
                        found.append((alias.name, child.lineno, in_function))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if target.split(".")[0] != "icefloe":
                    continue
                # `from . import x` may name a submodule
                for alias in child.names:
                    sub = f"{target}.{alias.name}"
                    found.append((sub if sub in KNOWN else target, child.lineno, in_function))
            visit(child, local)

    visit(tree, False)
    return found


MODULES = _modules()
# the compiled extension module has no .py file
KNOWN = set(MODULES) | {"icefloe._native"}
INTERNAL = {m: p for m, p in MODULES.items() if m not in FACADES}


def test_every_module_is_in_a_layer():
    for module in INTERNAL:
        if module != "icefloe":
            _rank(module)


@pytest.mark.parametrize("module", sorted(INTERNAL))
def test_imports_flow_down_the_layers(module):
    rank = _rank(module)
    for target, line, _ in _imports(module, INTERNAL[module]):
        assert target not in FACADES, f"{module}:{line} imports {target}, which only users may import"
        target_rank = _rank(target)
        assert target_rank <= rank, (
            f"{module}:{line} imports {target}: layer {LAYERS[target_rank][0]} is above "
            f"{LAYERS[rank][0]} (imports flow down: see docs/architecture.md)"
        )


@pytest.mark.parametrize("module", sorted(INTERNAL))
def test_no_function_local_imports_of_the_package(module):
    """A function-local import is how a circle hides: every package import is at the top."""
    local = [(t, line) for t, line, in_function in _imports(module, INTERNAL[module]) if in_function]
    assert not local, f"{module} imports {local} inside functions"


def test_no_import_circle():
    graph = {m: {t for t, _, _ in _imports(m, p) if t in INTERNAL and t != m} for m, p in INTERNAL.items()}
    # a package imports its own submodules in its __init__: that is not a circle back to it
    for m in graph:
        graph[m] = {t for t in graph[m] if not t.startswith(m + ".")}
    state: dict[str, int] = {}
    path: list[str] = []

    def walk(m: str) -> None:
        state[m] = 1
        path.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                cycle = path[path.index(t) :] + [t]
                raise AssertionError("import circle: " + " -> ".join(cycle))
            if t not in state:
                walk(t)
        path.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            walk(m)


@pytest.mark.parametrize(
    "module",
    sorted(m for m in INTERNAL if m.startswith("icefloe.executor")),
)
def test_executor_modules_load_no_driver_code(module):
    """What a Spark task imports to read or write: in a fresh interpreter, importing it must
    not load tables, scans, changes, catalogs or Spark code."""
    code = (
        "import sys, importlib, json\n"
        f"importlib.import_module({module!r})\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('icefloe'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout)
    assert module in loaded
    driver = [m for m in loaded if m.startswith(DRIVER_PREFIXES)]
    assert not driver, f"importing {module} loaded driver modules {driver}"


@pytest.mark.parametrize(
    "old,new",
    [
        ("reader", "executor.read"),
        ("writer", "executor.write"),
        ("deletes", "executor.position_deletes"),
        ("commit", "update.transaction"),
        ("snapshots", "update.snapshots"),
        ("row_deletes", "update.row_deletes"),
    ],
)
def test_moved_modules_still_import_with_a_warning(old, new):
    code = (
        "import warnings, importlib\n"
        "warnings.simplefilter('error')\n"
        f"try:\n    importlib.import_module('icefloe.{old}')\n"
        "except DeprecationWarning as e:\n    print(e)\n"
        f"warnings.simplefilter('ignore')\n"
        f"old = importlib.import_module('icefloe.{old}')\n"
        f"new = importlib.import_module('icefloe.{new}')\n"
        "assert all(getattr(old, n) is getattr(new, n) for n in new.__all__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert f"icefloe.{old} is deprecated: use icefloe.{new}" in out.stdout
