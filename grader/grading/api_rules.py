"""Static API rules: find forbidden modules and names in a submission's source with an AST scan.

Imports are resolved through aliases (``import torch.nn.functional as F`` makes
``F.scaled_dot_product_attention`` read as ``torch.nn.functional.scaled_dot_product_attention``),
``getattr(obj, "constant")`` reads as an attribute, and ``__import__("m")`` /
``importlib.import_module("m")`` with constant strings read as imports. Comments and strings are
never matched. Names reached by computed strings are left to the runtime checks (the runner's
import guard, and for torch exercises the op audit).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from grader.pyparse import parse


#: The grader's own modules, forbidden to every submission: importing the runner, its instruments or
#: the grader package can only serve to patch the probes' counters or forge result frames (the probe
#: judge's CPU-time cross-check, ``grader.judge.forgery``, catches what reaches them dynamically).
GRADER_MODULES = ("instruments", "runner", "grader")

#: torch's private dispatch machinery, forbidden to every submission: the probes count work through
#: torch's dispatch (``__torch_dispatch__``), and these switch it off or route around it
#: (``torch._C._DisableTorchDispatch()`` hid a quadratic recomputation from the counter; helper hunt,
#: issue 24). A solution reaches every operation it needs through torch's public API.
TORCH_PRIVATE_DISPATCH = ("torch._C", "torch.utils._python_dispatch", "torch._dispatch", "torch._ops")


@dataclass(frozen=True)
class Violation:
    """One use of a forbidden API.

    Attributes:
        name: the forbidden module or dotted name matched.
        used_as: the fully resolved name found in the source.
        line: 1-based line number.
    """

    name: str
    used_as: str
    line: int

    def sentence(self) -> str:
        """``uses scipy.special.softmax (line 3), which this exercise forbids``."""
        shown = self.used_as if self.used_as == self.name else f"{self.used_as} (forbidden: {self.name})"
        return f"uses {shown} at line {self.line}, which this exercise forbids"


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """Resolve ``a.b.c`` (or ``getattr(a.b, "c")``) to a dotted name through import aliases."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str)):
            parts.append(node.args[1].value)
            node = node.args[0]
        elif isinstance(node, ast.Name):
            base = aliases.get(node.id)
            if base is None:
                return None
            return ".".join([base, *reversed(parts)])
        else:
            return None


def _matches(name: str, forbidden: str) -> bool:
    return name == forbidden or name.startswith(forbidden + ".")


def scan_source(source: str, forbidden_modules: list[str] | tuple[str, ...],
                forbidden_names: list[str] | tuple[str, ...]) -> list[Violation]:
    """Find every use of a forbidden module or name in ``source``.

    Args:
        source: Python source text.
        forbidden_modules: top-level or dotted module names (``scipy``, ``torch``).
        forbidden_names: dotted names (``torch.nn.functional.scaled_dot_product_attention``).

    Returns:
        Violations in source order (one per line and name).

    Raises:
        SyntaxError: the source does not parse (the caller reports ``compile_error``).
    """
    tree = parse(source)  # thread-safe (grader.pyparse)
    aliases: dict[str, str] = {}
    found: dict[tuple[str, int], Violation] = {}
    rules = [*forbidden_modules, *forbidden_names]

    def report(resolved: str, line: int) -> None:
        for rule in rules:
            if _matches(resolved, rule):
                found.setdefault((rule, line), Violation(rule, resolved, line))

    # First pass: aliases from every import, wherever it is (a function-local import still counts).
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    aliases[a.asname] = a.name
                else:
                    top = a.name.split(".")[0]
                    aliases[top] = top
                report(a.name, node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            report(node.module, node.lineno)
            for a in node.names:
                full = f"{node.module}.{a.name}"
                aliases[a.asname or a.name] = full
                report(full, node.lineno)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            # F = torch.nn.functional  (an alias by assignment)
            resolved = _dotted(node.value, aliases)
            if resolved:
                aliases[node.targets[0].id] = resolved
    # Second pass: every attribute chain, name and dynamic import.
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, (ast.Attribute, ast.Name)) or (isinstance(node, ast.Call) and _is_getattr(node)):
            resolved = _dotted(node, aliases)
            if resolved:
                report(resolved, line)
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = _dotted(node.func, aliases) or (node.func.id if isinstance(node.func, ast.Name) else "")
            if func in ("__import__", "importlib.import_module"):
                report(node.args[0].value, line)
    return sorted(found.values(), key=lambda v: (v.line, v.name))


def _is_getattr(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Name) and node.func.id == "getattr"
