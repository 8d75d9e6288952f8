"""Exercise folders: ``exercises/<id>/`` (spec.md, stub.py, exercise.toml, checks.py) and
``reference/<id>.py``.

``exercise.toml`` is declarative data, parsed with ``tomllib`` and validated against
``grader/schemas/exercise.schema.json``; it is never executed. ``checks.py`` is host-side code of the
grader (trusted) that builds the plan and names the judges.
"""

from __future__ import annotations

import importlib.util
import json
import os
import tomllib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import ModuleType

import jsonschema

from grader.judge.probes import ProbeSpec
from grader.sandbox.base import Limits

PACKAGE_DIR = Path(__file__).resolve().parent.parent
SCHEMA_DIR = PACKAGE_DIR / "schemas"


def project_root() -> Path:
    """The folder holding ``exercises/`` and ``reference/`` (``$GRADER_HOME`` or the checkout)."""
    return Path(os.environ.get("GRADER_HOME") or PACKAGE_DIR.parent).resolve()


class UnknownExercise(LookupError):
    """No exercise folder has this id."""


class ExerciseInvalid(ValueError):
    """An exercise folder is incomplete or its ``exercise.toml`` does not match the schema."""


@dataclass(frozen=True)
class CheckSpec:
    """One graded property, as declared in ``exercise.toml``.

    Attributes:
        id: stable identifier (``values_2d``); samples name it in their docstrings.
        title: one line for tables.
        category: correctness, edge_case, stability, gradient, api or complexity.
        visibility: public (inputs shown to the candidate) or hidden.
        points: points awarded when the check passes.
    """

    id: str
    title: str
    category: str
    visibility: str
    points: float


@dataclass(frozen=True)
class Exercise:
    """A loaded exercise.

    Attributes:
        id, title, version, framework: from ``exercise.toml`` (framework is ``numpy`` or ``torch``).
        entry_points: names the submission must define.
        checks: declared checks, in order.
        limits: sandbox limits for a run.
        forbidden_modules: top-level modules the submission may not import.
        forbidden_names: dotted names the submission may not use (``scipy.special.softmax``).
        folder: the exercise folder.
        probes: complexity probes (``grader.judge.probes.ProbeSpec``) from ``[[probes]]``.
        forbidden_ops: ``fnmatch`` patterns of aten ops the runtime op audit flags (torch only).
    """

    id: str
    title: str
    version: str
    framework: str
    entry_points: tuple[str, ...]
    checks: tuple[CheckSpec, ...]
    limits: Limits
    forbidden_modules: tuple[str, ...]
    forbidden_names: tuple[str, ...]
    folder: Path
    forbidden_ops: tuple[str, ...] = ()
    probes: tuple = ()

    @property
    def spec_path(self) -> Path:
        """The candidate-facing statement."""
        return self.folder / "spec.md"

    @property
    def stub_path(self) -> Path:
        """The candidate's starting file."""
        return self.folder / "stub.py"

    @property
    def reference_path(self) -> Path:
        """The reference solution (host only, never enters the sandbox)."""
        return self.folder.parent.parent / "reference" / f"{self.id}.py"

    @property
    def baseline_paths(self) -> list[Path]:
        """Other plain correct implementations (``baselines/*.py``) whose float error, like the
        reference's, sets the tolerance; host only."""
        return sorted((self.folder / "baselines").glob("*.py"))

    @property
    def max_score(self) -> float:
        """Sum of all checks' points."""
        return float(sum(c.points for c in self.checks))

    def check(self, check_id: str) -> CheckSpec:
        """The declared check ``check_id``.

        Raises:
            KeyError: not declared.
        """
        for c in self.checks:
            if c.id == check_id:
                return c
        raise KeyError(check_id)

    @cached_property
    def checks_module(self) -> ModuleType:
        """The exercise's host-side ``checks.py`` (imported once)."""
        return _import_file(self.folder / "checks.py", f"grader_exercise_checks_{self.id}")

    def load_reference(self) -> ModuleType:
        """Import the reference module (a fresh module object each call)."""
        return _import_file(self.reference_path, f"grader_reference_{self.id}")


def _import_file(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _schema() -> dict:
    return json.loads((SCHEMA_DIR / "exercise.schema.json").read_text())


def load_exercise(folder: Path) -> Exercise:
    """Parse and validate ``folder/exercise.toml``.

    Raises:
        ExerciseInvalid: the file is missing, unparsable, fails the schema, or a required file of
            the folder (spec.md, stub.py, checks.py, the reference) is missing.
    """
    meta_path = folder / "exercise.toml"
    try:
        meta = tomllib.loads(meta_path.read_text(encoding="utf-8"))
        jsonschema.validate(meta, _schema())
    except (OSError, tomllib.TOMLDecodeError, jsonschema.ValidationError) as exc:
        raise ExerciseInvalid(f"{meta_path}: {getattr(exc, 'message', exc)}") from exc
    limits = Limits(**meta.get("limits", {}))
    api = meta.get("api", {})
    exercise = Exercise(
        id=meta["id"], title=meta["title"], version=meta["version"], framework=meta["framework"],
        entry_points=tuple(meta["entry_points"]),
        checks=tuple(CheckSpec(id=c["id"], title=c["title"], category=c["category"],
                               visibility=c.get("visibility", "public"), points=float(c.get("points", 1)))
                     for c in meta["checks"]),
        limits=limits,
        forbidden_modules=tuple(api.get("forbidden_modules", [])),
        forbidden_names=tuple(api.get("forbidden_names", [])),
        folder=folder,
        forbidden_ops=tuple(api.get("forbidden_ops", [])),
        probes=tuple(ProbeSpec.from_toml(p) for p in meta.get("probes", [])),
    )
    if exercise.id != folder.name:
        raise ExerciseInvalid(f"{meta_path}: id {exercise.id!r} differs from the folder name {folder.name!r}")
    ids = [c.id for c in exercise.checks]
    if len(set(ids)) != len(ids):
        raise ExerciseInvalid(f"{meta_path}: duplicate check ids")
    for probe in exercise.probes:
        if probe.check not in ids or exercise.check(probe.check).category != "complexity":
            raise ExerciseInvalid(f"{meta_path}: probe {probe.check!r} needs a declared check of category complexity")
        if list(probe.sizes) != sorted(set(probe.sizes)):
            raise ExerciseInvalid(f"{meta_path}: probe {probe.check!r} sizes must increase")
    for path in (exercise.spec_path, exercise.stub_path, folder / "checks.py", exercise.reference_path):
        if not path.is_file():
            raise ExerciseInvalid(f"exercise {exercise.id!r} is missing {path}")
    return exercise


def exercise_ids(root: Path | None = None) -> list[str]:
    """Ids of every exercise folder, sorted."""
    base = (root or project_root()) / "exercises"
    return sorted(p.name for p in base.iterdir() if (p / "exercise.toml").is_file()) if base.is_dir() else []


def get_exercise(exercise_id: str, root: Path | None = None) -> Exercise:
    """Load exercise ``exercise_id``.

    Raises:
        UnknownExercise: no such folder (the message lists the known ids).
        ExerciseInvalid: the folder is broken.
    """
    root = root or project_root()
    folder = root / "exercises" / exercise_id
    if not exercise_id or "/" in exercise_id or not (folder / "exercise.toml").is_file():
        known = ", ".join(exercise_ids(root)) or "none"
        raise UnknownExercise(f"unknown exercise {exercise_id!r} (known: {known})")
    return load_exercise(folder)
