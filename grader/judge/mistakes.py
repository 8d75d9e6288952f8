"""The bank of named mistakes: each exercise's known wrong solutions as small mutations of its reference.

One file per mistake, ``exercises/<id>/mistakes/<name>.py``, named by the mistake. Its module
docstring starts with the sentence a candidate reads when the mistake is diagnosed and holds a
``Must fail: <check id>[, <check id>...]`` line (every named check must fail, and the score must be
below full marks). The body is one of:

* ``PATCH = [("old text", "new text"), ...]``: the mutant is the reference source with each ``old``
  replaced by ``new``. Each ``old`` must occur exactly once in the reference, so a reference edit
  that moves the patched line makes the bank fail loudly instead of silently testing nothing.
  ``PATCH`` is read with ``ast.literal_eval`` and never executed.
* no ``PATCH``: the file itself is the mutant, a complete module with the reference's API (for
  mistakes that are not a local edit).

Optional with ``PATCH``: ``BASE = "<other mistake>"``, a literal naming a sibling file of the same bank:
the patch then applies to that mistake's source instead of the reference (a second mistake in the
same hand-written ``torch.autograd.Function`` is one edit of the first, not a copy of it).

Optional, in either form: ``REPLAY_ERROR_RATIO = 10.0`` (a literal, read with ``ast.literal_eval``) for
a mistake whose outputs are defined only up to rounding at a lower precision (angles or a table built
in float32): two equally valid float32 formulations differ from each other by as much as either
differs from the reference, so the candidate reproduces the mutant on a case when its greatest
distance from the mutant is at most this many times the mutant's own greatest distance from the
reference's answer (``grader.grading.diagnosis``), instead of within the case's tolerance.
With it, ``REPLAY_EVIDENCE = "float32_values"`` asks for evidence of the lower precision itself on
each such case: every value of the candidate's output is exactly a float32 number (computed in
float32, then cast back); ``REPLAY_EVIDENCE = "float64_values"`` asks for the opposite, some value
that is no float32 number (a float32 table times float64 inputs: a result computed wholly in float32
and cast back is float32 internals, not a float32 table). An error of float32's size has other causes
(an epsilon of 1e-7 in a softmax's denominator, an approximate erf), and those leave float64 values
that are not.

The bank is trusted host code (it is written by exercise authors, like the reference): mutants run
in-process on the host, for ``grade selfcheck`` and for diagnosis, and are never sent to a sandbox.
The approach is that of mutation-testing tools (mutmut, cosmic-ray): a named operator applied to
correct code, not a copy of it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from grader.pyparse import parse

MUST_FAIL = re.compile(r"^\s*Must fail:\s*(.+?)\s*$", re.MULTILINE)


class MistakeInvalid(ValueError):
    """A mistake file is malformed, or its patch does not apply to the reference (a grader fault)."""


@dataclass(frozen=True)
class Mistake:
    """One named mistake of an exercise.

    Attributes:
        name: the file's stem (``logits_divided_by_d_k``); stable, used in scorecards' ``details``.
        path: the mistake file.
        diagnosis: the first paragraph of its docstring, the sentence shown to the candidate.
        must_fail: check ids the mutant must fail (selfcheck proves it).
        source: the mutant's full source text (the patched reference, or the file itself).
        error_ratio: ``REPLAY_ERROR_RATIO`` of the file, or None (see the module docstring).
    """

    name: str
    path: Path
    diagnosis: str
    must_fail: tuple[str, ...]
    source: str
    error_ratio: float | None = None


_MISSING = object()

#: The values ``REPLAY_EVIDENCE`` may take (see the module docstring).
REPLAY_EVIDENCE = ("float32_values", "float64_values")


class ErrorRatio(float):
    """A ``REPLAY_ERROR_RATIO`` (a float) that also carries the evidence a replay within it needs:
    ``float32_values`` (``REPLAY_EVIDENCE = "float32_values"``: every value of the candidate's output is
    a float32 number) or ``float64_values`` (``"float64_values"``: some value is not, as where a float32
    table multiplies float64 inputs), read by ``grader.grading.diagnosis._within_error_ratio``."""

    float32_values: bool = False
    float64_values: bool = False


def _literal(path: Path, tree: ast.Module, name: str, what: str):
    """The value of the module-level assignment ``name = <literal>`` (``ast.literal_eval``), or
    ``_MISSING`` when there is none.

    Raises:
        MistakeInvalid: the assigned value is not a literal (``what`` says what it must be).
    """
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            try:
                return ast.literal_eval(node.value)
            except ValueError as exc:
                raise MistakeInvalid(f"{path}: {name} must be {what}") from exc
    return _MISSING


def _patch(path: Path, tree: ast.Module) -> list[tuple[str, str]] | None:
    value = _literal(path, tree, "PATCH", "a literal list of (old, new) pairs")
    if value is _MISSING:
        return None
    if not (isinstance(value, (list, tuple)) and value and all(
            isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(s, str) for s in p) for p in value)):
        raise MistakeInvalid(f"{path}: PATCH must be a non-empty list of (old, new) string pairs")
    return [(old, new) for old, new in value]


def _base(path: Path, tree: ast.Module) -> Path | None:
    value = _literal(path, tree, "BASE", "a literal string")
    if value is _MISSING:
        return None
    base = path.with_name(f"{value}.py") if isinstance(value, str) and value.isidentifier() else None
    if base is None or base == path or not base.is_file():
        raise MistakeInvalid(f"{path}: BASE must name another mistake file of this bank, got {value!r}")
    return base


def _error_ratio(path: Path, tree: ast.Module) -> float | None:
    value = _literal(path, tree, "REPLAY_ERROR_RATIO", "a literal number")
    evidence = _literal(path, tree, "REPLAY_EVIDENCE", "a literal string")
    if value is _MISSING:
        if evidence is not _MISSING:
            raise MistakeInvalid(f"{path}: REPLAY_EVIDENCE needs a REPLAY_ERROR_RATIO")
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 1:
        raise MistakeInvalid(f"{path}: REPLAY_ERROR_RATIO must be a number >= 1, got {value!r}")
    ratio = ErrorRatio(value)
    if evidence is not _MISSING:
        if evidence not in REPLAY_EVIDENCE:
            raise MistakeInvalid(f"{path}: REPLAY_EVIDENCE must be one of {', '.join(REPLAY_EVIDENCE)}, got {evidence!r}")
        setattr(ratio, evidence, True)
    return ratio


def apply_patch(reference_source: str, patch: list[tuple[str, str]], where: str = "the mistake") -> str:
    """The reference source with each ``(old, new)`` of ``patch`` applied in order.

    Raises:
        MistakeInvalid: an ``old`` text does not occur exactly once at the point it is applied.
    """
    text = reference_source
    for old, new in patch:
        count = text.count(old)
        if count != 1:
            raise MistakeInvalid(f"{where}: patch text {old!r} occurs {count} times in the reference (needs 1)")
        text = text.replace(old, new)
    return text


def load_mistake(path: Path, reference_path: Path, _bases: tuple[Path, ...] = ()) -> Mistake:
    """Read one mistake file (see the module docstring).

    Raises:
        MistakeInvalid: no docstring, no ``Must fail:`` line, a patch that does not apply, or a
            ``BASE`` that is not another mistake of the bank (or leads back to this one).
    """
    if path in _bases:
        raise MistakeInvalid(f"{path}: BASE leads back to itself through {', '.join(p.stem for p in _bases)}")
    text = path.read_text(encoding="utf-8")
    try:
        tree = parse(text, str(path))
    except SyntaxError as exc:
        raise MistakeInvalid(f"{path}: {exc.msg} (line {exc.lineno})") from exc
    doc = ast.get_docstring(tree) or ""
    match = MUST_FAIL.search(doc)
    if not doc or not match:
        raise MistakeInvalid(f"{path}: the docstring needs a diagnosis sentence and a 'Must fail: <check>' line")
    diagnosis = " ".join(doc.split("\n\n")[0].split())
    must_fail = tuple(c.strip() for c in match.group(1).split(",") if c.strip())
    patch = _patch(path, tree)
    base = _base(path, tree)
    if base is not None and patch is None:
        raise MistakeInvalid(f"{path}: BASE needs a PATCH to apply to {base.stem}")
    original = (load_mistake(base, reference_path, (*_bases, path)).source if base is not None
                else reference_path.read_text(encoding="utf-8"))
    source = text if patch is None else apply_patch(original, patch, str(path))
    return Mistake(name=path.stem, path=path, diagnosis=diagnosis, must_fail=must_fail, source=source,
                   error_ratio=_error_ratio(path, tree))


def load_bank(mistakes_dir: Path, reference_path: Path) -> list[Mistake]:
    """Every mistake of one exercise (``mistakes_dir/*.py``, sorted by name; none when the folder is absent).

    Raises:
        MistakeInvalid: a file is malformed (see ``load_mistake``).
    """
    if not mistakes_dir.is_dir():
        return []
    return [load_mistake(p, reference_path) for p in sorted(mistakes_dir.glob("*.py")) if not p.name.startswith("_")]
