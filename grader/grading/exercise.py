"""Exercise folders: ``exercises/<id>/`` (spec.md, stub.py, exercise.toml, checks.py) and
``reference/<id>.py``.

Tracks: an exercise is graded in its default track (``framework`` in ``exercise.toml``: ``numpy`` or
``torch``) and optionally in the other one, declared by a ``[tracks.<track>]`` table that says only what
differs (title, limits, api, extra or replaced checks, probes; see ``_apply_track``). The default
track's files keep their plain names (``stub.py``, ``reference/<id>.py``, ``baselines/``,
``submissions/samples/<id>/*.py``); the other track's carry its name (``stub_<track>.py``,
``reference/<id>_<track>.py``, ``baselines_<track>/``, ``submissions/samples/<id>/<track>/*.py``).
``checks.py`` serves every track: ``build_plan(public_seed, hidden_seed, track=...)`` (the ``track``
parameter may be left out by an exercise that has one track).

``exercise.toml`` is declarative data, parsed with ``tomllib`` and validated against
``grader/schemas/exercise.schema.json``; it is never executed. ``checks.py`` is host-side code of the
grader (trusted) that builds the plan and names the judges.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import os
import tomllib
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from types import ModuleType

import jsonschema

from grader.judge.mistakes import load_bank
from grader.judge.probes import ProbeSpec
from grader.sandbox.base import Limits
from grader.pyparse import parse

PACKAGE_DIR = Path(__file__).resolve().parent.parent
SCHEMA_DIR = PACKAGE_DIR / "schemas"

#: The two tracks an exercise can have: NumPy arrays in and out, or torch tensors (gradients graded).
TRACKS = ("numpy", "torch")


def project_root() -> Path:
    """The folder holding ``exercises/`` and ``reference/`` (``$GRADER_HOME`` or the checkout)."""
    return Path(os.environ.get("GRADER_HOME") or PACKAGE_DIR.parent).resolve()


class UnknownExercise(LookupError):
    """No exercise folder has this id."""


class UnknownTrack(UnknownExercise):
    """The exercise exists but has no such track."""


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
        id, title, version, framework: from ``exercise.toml`` (framework is ``numpy`` or ``torch``:
            the default track). ``title`` is the selected track's.
        entry_points: names the submission must define.
        checks: declared checks, in order.
        limits: sandbox limits for a run.
        forbidden_modules: top-level modules the submission may not import.
        forbidden_names: dotted names the submission may not use (``scipy.special.softmax``).
        folder: the exercise folder.
        probes: complexity probes (``grader.judge.probes.ProbeSpec``) from ``[[probes]]``.
        forbidden_ops: ``fnmatch`` patterns of aten ops the runtime op audit flags (torch only).
        track: the track this object grades (``numpy`` or ``torch``; empty means ``framework``).
        tracks: every track of the exercise, the default (``framework``) first.
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
    track: str = ""
    tracks: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.track:
            object.__setattr__(self, "track", self.framework)
        if not self.tracks:
            object.__setattr__(self, "tracks", (self.framework,))

    @property
    def is_default_track(self) -> bool:
        """Whether this is the exercise's original track (files with plain names)."""
        return self.track == self.framework

    def _tracked(self, stem: str, suffix: str = "") -> str:
        return f"{stem}{suffix}" if self.is_default_track else f"{stem}_{self.track}{suffix}"

    @property
    def spec_path(self) -> Path:
        """The candidate-facing statement: ``spec.md``, or in the other track ``spec_<track>.md`` where
        the exercise has one (written for that track), else ``spec.md`` (``has_track_spec`` says which)."""
        own = self.folder / self._tracked("spec", ".md")
        return own if own.is_file() else self.folder / "spec.md"

    @property
    def has_track_spec(self) -> bool:
        """Whether ``spec_path`` is written for this track (always in the default track)."""
        return self.spec_path.name == self._tracked("spec", ".md")

    @property
    def stub_path(self) -> Path:
        """The candidate's starting file (``stub.py``, or ``stub_<track>.py`` in the other track)."""
        return self.folder / self._tracked("stub", ".py")

    @property
    def reference_path(self) -> Path:
        """The reference solution (host only, never enters the sandbox): ``reference/<id>.py``, or
        ``reference/<id>_<track>.py`` in the other track."""
        return self.folder.parent.parent / "reference" / self._tracked(self.id, ".py")

    @property
    def baseline_paths(self) -> list[Path]:
        """Other plain correct implementations (``baselines/*.py``, ``baselines_<track>/*.py`` in the
        other track) whose float error, like the reference's, sets the tolerance; host only."""
        return sorted((self.folder / self._tracked("baselines")).glob("*.py"))

    @property
    def samples_path(self) -> Path:
        """Known solutions of this track: ``submissions/samples/<id>/`` (default track) or
        ``submissions/samples/<id>/<track>/``."""
        base = self.folder.parent.parent / "submissions" / "samples" / self.id
        return base if self.is_default_track else base / self.track

    @property
    def mistakes_dir(self) -> Path:
        """``mistakes/`` (``mistakes_<track>/`` in the other track): the bank of named mistakes
        (``grader.judge.mistakes``), patches of this track's reference; host only."""
        return self.folder / self._tracked("mistakes")

    @property
    def confusers_dir(self) -> Path:
        """``confusers/`` (``confusers_<track>/`` in the other track): wrong solutions whose symptom
        matches a hint or a bank message while their cause is another (``grade selfcheck`` proves none
        of them gets a wrong name; ``grader.cohort.selfcheck``); host only."""
        return self.folder / self._tracked("confusers")

    @cached_property
    def mistakes(self) -> tuple:
        """The exercise's named mistakes (``grader.judge.mistakes.Mistake``), read once.

        Raises:
            grader.judge.mistakes.MistakeInvalid: a mistake file is malformed or its patch no longer applies.
        """
        return tuple(load_bank(self.mistakes_dir, self.reference_path))

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
        """Import the reference module of this track (a fresh module object each call)."""
        return _import_file(self.reference_path, f"grader_reference_{self.id}_{self.track}")

    def build_plan(self, public_seed: int, hidden_seed: int):
        """``checks.build_plan`` for this track (``track=`` passed when ``checks.py`` accepts it).

        Returns:
            The ``grader.run.plan.Plan`` of this track.

        Raises:
            ExerciseInvalid: the exercise has several tracks but ``build_plan`` takes no ``track``.
        """
        return self._call_checks("build_plan", public_seed=public_seed, hidden_seed=hidden_seed)

    def probe_steps(self, builder, probe, size: int, rng) -> None:
        """``checks.probe_steps(builder, probe, size, rng[, track=...])`` for this track."""
        self._call_checks("probe_steps", builder, probe, size, rng)

    def _call_checks(self, name: str, *args, **kwargs):
        fn = getattr(self.checks_module, name, None)
        if fn is None:
            raise ExerciseInvalid(f"{self.folder / 'checks.py'} defines no {name}()")
        params = inspect.signature(fn).parameters
        if "track" in params or any(p.kind == p.VAR_KEYWORD for p in params.values()):
            return fn(*args, **kwargs, track=self.track)
        if not self.is_default_track:
            raise ExerciseInvalid(f"{self.folder / 'checks.py'}: {name}() takes no 'track' argument, "
                                  f"so it cannot build the {self.track} track")
        return fn(*args, **kwargs)


def _import_file(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _schema() -> dict:
    return json.loads((SCHEMA_DIR / "exercise.schema.json").read_text())


@lru_cache(maxsize=1)
def _validator():
    """The exercise schema's validator, built once per process: ``jsonschema.validate`` re-checks the
    schema against its meta-schema and rebuilds the validator on every call (0.7 s of each service
    grading of mha at load 12 on 2 cores: the exercise is loaded twice per submission)."""
    schema = _schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _validate(meta: dict) -> None:
    """Raise the most relevant ``jsonschema.ValidationError`` of ``meta``, as ``jsonschema.validate`` does."""
    error = jsonschema.exceptions.best_match(_validator().iter_errors(meta))
    if error is not None:
        raise error


def _apply_track(meta: dict, track: str, meta_path: Path) -> dict:
    """``meta`` as seen from ``track``: the ``[tracks.<track>]`` table laid over the default.

    ``title``/``summary`` replace; ``limits`` merge key by key; ``api`` replaces the default's api as a
    whole (another library: other forbidden modules); a check whose id is a default check's replaces
    it in place, other checks are appended; ``drop_checks`` removes default checks; ``probes``, when
    given, replace the default's probes.

    Raises:
        ExerciseInvalid: a table for the default track, or ``drop_checks`` naming an unknown check.
    """
    tables = meta.get("tracks", {})
    if meta["framework"] in tables:
        raise ExerciseInvalid(f"{meta_path}: [tracks.{meta['framework']}] describes the default track "
                              "(framework); put its settings at the top level")
    if track == meta["framework"]:
        return meta
    over = tables[track]
    out = {**meta, "limits": {**meta.get("limits", {}), **over.get("limits", {})}}
    for key in ("title", "summary", "api", "probes"):
        if key in over:
            out[key] = over[key]
    drop = set(over.get("drop_checks", []))
    unknown = drop - {c["id"] for c in meta["checks"]}
    if unknown:
        raise ExerciseInvalid(f"{meta_path}: [tracks.{track}] drop_checks names unknown checks {sorted(unknown)}")
    replaced = {c["id"]: c for c in over.get("checks", [])}
    checks = [replaced.pop(c["id"], c) for c in meta["checks"] if c["id"] not in drop]
    out["checks"] = checks + [c for c in over.get("checks", []) if c["id"] in replaced]
    if not out["checks"]:
        raise ExerciseInvalid(f"{meta_path}: the {track} track has no checks")
    return out


def load_exercise(folder: Path, track: str | None = None) -> Exercise:
    """Parse and validate ``folder/exercise.toml``, as seen from ``track`` (None: the default track).

    Raises:
        UnknownTrack: the exercise has no such track.
        ExerciseInvalid: the file is missing, unparsable, fails the schema, or a required file of
            the track (spec.md, its stub, checks.py, its reference) is missing.
    """
    meta_path = folder / "exercise.toml"
    try:
        meta = tomllib.loads(meta_path.read_text(encoding="utf-8"))
        _validate(meta)
    except (OSError, tomllib.TOMLDecodeError, jsonschema.ValidationError) as exc:
        raise ExerciseInvalid(f"{meta_path}: {getattr(exc, 'message', exc)}") from exc
    tracks = (meta["framework"], *sorted(t for t in meta.get("tracks", {}) if t != meta["framework"]))
    track = track or meta["framework"]
    if track not in tracks:
        raise UnknownTrack(f"exercise {meta['id']!r} has no {track!r} track (tracks: {', '.join(tracks)})")
    meta = _apply_track(meta, track, meta_path)
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
        track=track, tracks=tracks,
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
            what = exercise.id if exercise.is_default_track else f"{exercise.id} ({exercise.track} track)"
            raise ExerciseInvalid(f"exercise {what} is missing {path}")
    return exercise


def exercise_ids(root: Path | None = None) -> list[str]:
    """Ids of every exercise folder, sorted."""
    base = (root or project_root()) / "exercises"
    return sorted(p.name for p in base.iterdir() if (p / "exercise.toml").is_file()) if base.is_dir() else []


def get_exercise(exercise_id: str, root: Path | None = None, track: str | None = None) -> Exercise:
    """Load exercise ``exercise_id`` in ``track`` (None: its default track, the ``framework``).

    Raises:
        UnknownExercise: no such folder (the message lists the known ids).
        UnknownTrack: no such track (a subclass of ``UnknownExercise``; the message lists the tracks).
        ExerciseInvalid: the folder is broken.
    """
    root = root or project_root()
    folder = root / "exercises" / exercise_id
    if not exercise_id or "/" in exercise_id or not (folder / "exercise.toml").is_file():
        known = ", ".join(exercise_ids(root)) or "none"
        raise UnknownExercise(f"unknown exercise {exercise_id!r} (known: {known})")
    return load_exercise(folder, track)


def imported_track(source: str) -> str | None:
    """The track a submission's source is written for, read from its imports via the AST (never run).

    ``torch`` when it imports ``torch`` (a NumPy-track file may not), else ``numpy`` when it imports
    ``numpy``, else None (nothing to tell: the caller falls back to the exercise's default track).

    Raises:
        SyntaxError: the source does not parse.
    """
    found = set()
    for node in ast.walk(parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    if "torch" in found:
        return "torch"
    return "numpy" if "numpy" in found else None


def track_for_file(exercise_id: str, path: Path, root: Path | None = None) -> str | None:
    """The track to grade ``path`` in for ``exercise_id``: the one its imports name when the exercise
    has it, else None (the default). An unreadable or unparsable file gives None: grading reports it.
    """
    try:
        source = Path(path).read_bytes()
    except OSError:
        return None
    if str(path).lower().endswith(".ipynb"):  # a notebook: the imports of its code cells
        from grader.grading.notebook import submission_text  # noqa: PLC0415

        text = submission_text(source)
        return None if text is None else track_for_source(exercise_id, text, root)
    return track_for_source(exercise_id, source, root)


def track_for_source(exercise_id: str, source: bytes | str, root: Path | None = None) -> str | None:
    """``track_for_file`` for a submission's bytes (an upload): the track its imports name when the
    exercise has it, else None. Undecodable or unparsable source gives None."""
    try:
        # decoded as Python decodes a file (PEP 263: BOM, coding line), like the grader's own scan
        text = importlib.util.decode_source(source) if isinstance(source, bytes) else source
        track = imported_track(text)
    except (UnicodeDecodeError, SyntaxError, ValueError):
        return None
    if track is None:
        return None
    try:
        available = get_exercise(exercise_id, root).tracks
    except (UnknownExercise, ExerciseInvalid):
        return None
    return track if track in available else None
