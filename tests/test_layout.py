"""The code's shape, held by the build: small modules and functions in src/."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "edukg"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def test_modules_and_functions_stay_small() -> None:
    too_big = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            too_big.append(f"{path.relative_to(SRC)}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_big.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name}: {length}")
    assert not too_big, "split these: " + "; ".join(too_big)


def test_every_layer_is_a_package_of_its_own() -> None:
    layers = {"model", "store", "services", "ingest", "adapters", "app", "cli"}
    packages = {p.parent.name for p in SRC.glob("*/__init__.py")} - {"static"}
    assert packages == layers
    loose = {p.name for p in SRC.glob("*.py")} - {"__init__.py"}
    assert not loose, f"modules outside the layers: {sorted(loose)}"
