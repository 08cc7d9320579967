"""The browser tests' waits and shared helpers come from tests/browser/conftest.py: every
``wait_for_function`` polls on a timer through :func:`tests.browser.conftest.wait_until` (Playwright's
default polls on animation frames, which a loaded machine's headless page may not run), there is one
``TIMEOUT_MS``, and no test module takes conftest's helpers from another test module. Reads the sources;
no browser needed."""

from __future__ import annotations

import ast
from pathlib import Path

HERE = Path(__file__).parent
CONFTEST = HERE / "conftest.py"


def _modules() -> dict[str, ast.Module]:
    return {path.name: ast.parse(path.read_text(encoding="utf-8")) for path in sorted(HERE.glob("test_*.py"))}


def _conftest_names() -> set[str]:
    tree = ast.parse(CONFTEST.read_text(encoding="utf-8"))
    names = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    return names | {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                    if isinstance(t, ast.Name)}


def test_no_browser_test_calls_wait_for_function_but_through_wait_until():
    calls = [f"{name}:{node.lineno}" for name, tree in _modules().items() for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and node.func.attr == "wait_for_function"]
    assert calls == []


def test_timeout_ms_is_defined_in_conftest_only():
    defined = [f"{name}:{node.lineno}" for name, tree in _modules().items() for node in tree.body
               if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TIMEOUT_MS"
                                                       for t in node.targets)]
    assert defined == []
    assert "TIMEOUT_MS" in _conftest_names()


def test_conftests_helpers_are_imported_from_conftest_not_from_another_test_module():
    shared = _conftest_names()
    borrowed = [f"{name}:{node.lineno} {alias.name} from {node.module}" for name, tree in _modules().items()
                for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tests.browser.test_")
                for alias in node.names if alias.name in shared]
    assert borrowed == []
