"""An on-disk cache of the reference's answers, so that after the first submission at a seed the host
neither re-runs the reference nor imports torch for it (a batch's workers, a service's workers, the
next ``grade submit`` at the same seed).

One entry per (exercise id, version and track, seed, device, grader version), named by a sha256 that
also covers the bytes of every file of the exercise folder, of the reference module, of the runner
(``grader/run/*.py``, which executes the reference), the exercise's checks and probes as loaded, and
the numpy and torch versions: editing any of them invalidates the entry. An entry is one ``.npz``
file (``np.savez``, read back with ``allow_pickle=False``): every returned array, plus the runs'
JSON reports as a byte array. Writers write a temp file in the same folder and ``os.replace`` it, so
concurrent writers (batch workers, Ray workers sharing a disk) never leave a torn entry; a reader
that finds an unreadable entry treats it as a miss.

The mistake bank's mutants (``grader.grading.diagnosis``: diagnosis by replay) are trusted host code
like the reference, and their answers are kept here too (``load_mutant`` / ``store_mutant``): one
entry per (exercise, seed, device, grader version, kind of replay, mutant), named by a sha256 of the
same content hash plus the mutant file's bytes and its full source, under ``mutants/`` beside
``references/``, with the same permissions, atomic writes and unreadable-entry-is-a-miss rule. So a
second grading of a wrong torch file at a seed imports torch on the host neither for the reference
nor for the replay.

Where: ``$GRADER_CACHE_DIR/references`` when set, else ``~/.cache/attention-grader/references``.
``GRADER_REFERENCE_CACHE=off`` disables it (benchmarks that time the reference). Each machine keeps
its own cache (a Ray node fills its own on its first submission per exercise and seed). The entries
hold expected answers of hidden cases: they are 0600 (``mkstemp``) in a folder made or narrowed to
0700 (``grader.private``), whatever the umask.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from grader import __version__, private
from grader.run.channel import RunResults, StepResult

#: 3: the reference's public and hidden steps are measured in two runs (issue 20), as the sandbox runs them
FORMAT = 3
_MANIFEST = "__manifest__"
_RUN_DIR = Path(__file__).resolve().parent.parent / "run"


def enabled() -> bool:
    """False when ``GRADER_REFERENCE_CACHE`` is ``off``/``0``/``false``."""
    return os.environ.get("GRADER_REFERENCE_CACHE", "on").strip().lower() not in {"off", "0", "false", "no"}


def cache_dir() -> Path:
    """``$GRADER_CACHE_DIR/references``, else ``~/.cache/attention-grader/references``."""
    base = os.environ.get("GRADER_CACHE_DIR")
    return (Path(base) if base else Path.home() / ".cache" / "attention-grader") / "references"


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def files_hash(exercise) -> str:
    """Hex sha256 of the bytes of every file the exercise's grading reads on the host: its folder
    (spec, stub, ``exercise.toml``, ``checks.py``, baselines), its reference modules (every track:
    ``reference/<id>.py``, ``reference/<id>_<track>.py``) and the runner (``grader/run/*.py``).
    Two machines with equal hashes build the same plans and reference answers.

    Raises:
        OSError: a file of the exercise cannot be read.
    """
    h = hashlib.sha256()
    folder = Path(exercise.folder)
    files = sorted(p for p in folder.rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts and not p.name.endswith(".pyc"))
    ref = Path(exercise.reference_path)
    refs = {ref, *ref.parent.glob(f"{exercise.id}_*.py")} if ref.parent.is_dir() else {ref}
    files += sorted(p for p in refs if p.is_file() or p == ref)
    files += sorted(_RUN_DIR.glob("*.py"))
    for path in files:
        data = path.read_bytes()
        name = path.relative_to(folder) if path.is_relative_to(folder) else path.name
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def content_hash(exercise) -> str:
    """Hex sha256 of what the reference's answers depend on: ``files_hash``, the checks and probes as
    loaded, the numpy and torch versions and this cache's format.

    Raises:
        OSError: a file of the exercise cannot be read.
    """
    h = hashlib.sha256(files_hash(exercise).encode())
    h.update(repr(([c.id for c in exercise.checks], exercise.probes)).encode())
    h.update(f"numpy {np.__version__} torch {_version('torch')} format {FORMAT}".encode())
    return h.hexdigest()


def _entry_name(exercise, seed: int, device: str, part: str = "seed") -> str:
    track = getattr(exercise, "track", None)
    parts = [exercise.id, *([str(track)] if track else []), f"v{exercise.version}", f"{part}{int(seed)}",
             device.split(" ")[0].replace(":", ""), f"g{__version__}"]
    return "-".join(str(p).replace("/", "_") for p in parts)


def entry_path(exercise, seed: int, device: str, part: str = "seed") -> Path:
    """The cache file for (exercise, seed, device) under ``cache_dir()``; another ``part`` than
    ``"seed"`` (``grade.answers_for`` passes ``"probes-<digest of the probe steps>-"``) names the
    entry of the probe steps' answers alone, the same at every seed.

    Raises:
        OSError: a file of the exercise cannot be read.
    """
    name = _entry_name(exercise, seed, device, part)
    key = hashlib.sha256(f"{name}\0{content_hash(exercise)}".encode()).hexdigest()[:32]
    return cache_dir() / f"{name}-{key}.npz"


def _encode(runs: list[RunResults]) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    manifest = []
    for r, run in enumerate(runs):
        steps = []
        for step_id, step in run.steps.items():
            names = []
            for name, value in step.arrays.items():
                key = f"{r}/{len(steps)}/{len(names)}"
                arrays[key] = np.asarray(value)
                if arrays[key].dtype.hasobject:
                    raise TypeError(f"step {step_id!r} returned an object array, which .npz cannot hold without pickle")
                names.append([name, key])
            steps.append({"id": step_id, "report": step.report, "arrays": names})
        manifest.append({"started": run.started, "import_report": run.import_report, "done": run.done,
                         "forbidden_imports": run.forbidden_imports, "problems": run.problems, "steps": steps})
    arrays[_MANIFEST] = np.frombuffer(json.dumps({"format": FORMAT, "runs": manifest}).encode(), dtype=np.uint8)
    return arrays


def _decode(npz) -> list[RunResults]:
    manifest = json.loads(npz[_MANIFEST].tobytes().decode())
    if manifest.get("format") != FORMAT:
        raise ValueError(f"cache format {manifest.get('format')} is not {FORMAT}")
    runs = []
    for m in manifest["runs"]:
        run = RunResults(started=m["started"], import_report=m["import_report"], done=m["done"],
                         forbidden_imports=m["forbidden_imports"], problems=m["problems"])
        for step in m["steps"]:
            run.steps[step["id"]] = StepResult(report=step["report"],
                                               arrays={name: npz[key] for name, key in step["arrays"]})
        runs.append(run)
    return runs


def load(exercise, seed: int, device: str,
         part: str = "seed") -> tuple[RunResults, RunResults, list[RunResults], RunResults] | None:
    """The cached ``(expected, golden, baselines, float32)`` (as ``grade.answers_for`` returns them), or None on
    a miss, when disabled, or when the entry cannot be read (a torn or foreign file is removed);
    ``part``: as ``entry_path``."""
    if not enabled():
        return None
    try:
        path = entry_path(exercise, seed, device, part)
    except OSError:
        return None
    runs = _load_runs(path)
    if runs is None or len(runs) < 3:
        return None
    expected, golden, float32, *baselines = runs
    return expected, golden, baselines, float32


def _load_runs(path: Path) -> list[RunResults] | None:
    """The runs of the entry at ``path``, or None when absent or unreadable (a torn or foreign
    file is removed)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            return _decode(npz)
    except Exception:  # noqa: BLE001 - unreadable entry: a miss, and it goes
        path.unlink(missing_ok=True)
        return None


def _store_runs(path: Path, runs: list[RunResults]) -> Path | None:
    """Write ``runs`` to ``path`` atomically (0600 temp file in the same 0700 folder, then
    ``os.replace``); None when it could not be written."""
    tmp = None
    try:
        private.make_dirs(path.parent, fix_existing=True)
        fd, tmp = tempfile.mkstemp(prefix=".ref-", suffix=".npz", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **_encode(runs))
        os.replace(tmp, path)
        return path
    except (OSError, TypeError, ValueError):
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        return None


def store(exercise, seed: int, device: str,
          answers: tuple[RunResults, RunResults, list[RunResults], RunResults], part: str = "seed") -> Path | None:
    """Write ``answers`` atomically (temp file in the same folder, then ``os.replace``). Returns the
    entry's path, or None when disabled or when it could not be written (the cache is an
    optimisation: a failure to store never fails a grading)."""
    if not enabled():
        return None
    expected, golden, baselines, float32 = answers
    try:
        path = entry_path(exercise, seed, device, part)
    except OSError:
        return None
    return _store_runs(path, [expected, golden, float32, *baselines])


# -- the mistake bank's answers (diagnosis by replay) -----------------------------------------------

def mutants_dir() -> Path:
    """``mutants/`` beside ``cache_dir()`` (``$GRADER_CACHE_DIR/mutants`` when set)."""
    return cache_dir().parent / "mutants"


class MutantKeys:
    """Names the entries of one exercise's mutants at one (seed, device), hashing the exercise's
    files once (``content_hash``) for all the mutants of a grading.

    Args:
        exercise: the ``grader.grading.exercise.Exercise``.
        seed: the plan's seed; device: the probe device (``"cpu"``, ``"cuda (...)"``).

    Raises:
        OSError: a file of the exercise cannot be read.
    """

    def __init__(self, exercise, seed: int, device: str) -> None:
        self.name = _entry_name(exercise, seed, device)
        self.content = content_hash(exercise)

    def path(self, kind: str, mistake) -> Path:
        """The entry of ``mistake``'s answers for the replay ``kind`` (``"values"``, or
        ``"cost-<check id>"``): named by the mutant file's bytes and its full (patched) source."""
        h = hashlib.sha256(f"{self.name}\0{self.content}\0{kind}\0{mistake.name}\0".encode())
        try:
            h.update(Path(mistake.path).read_bytes())
        except OSError:
            h.update(b"\0unreadable")
        h.update(b"\0" + mistake.source.encode("utf-8"))
        safe = "".join(c if c.isalnum() or c in "_." else "_" for c in f"{kind}-{mistake.name}")
        return mutants_dir() / f"{self.name}-{safe}-{h.hexdigest()[:32]}.npz"


def load_mutant(keys: MutantKeys, kind: str, mistake) -> RunResults | None:
    """``mistake``'s cached results for the replay ``kind``, or None on a miss, when disabled, or
    when the entry cannot be read (then it is removed)."""
    if not enabled():
        return None
    runs = _load_runs(keys.path(kind, mistake))
    return runs[0] if runs and len(runs) == 1 else None


def store_mutant(keys: MutantKeys, kind: str, mistake, results: RunResults) -> Path | None:
    """Write ``mistake``'s results for ``kind`` atomically; None when disabled or not written (a
    failure to store never fails a grading)."""
    if not enabled():
        return None
    return _store_runs(keys.path(kind, mistake), [results])
