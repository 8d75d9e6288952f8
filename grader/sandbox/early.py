"""Start ``grade submit``'s first sandbox before the grader's own modules are imported (issue 25).

A cold ``grade submit`` of a torch exercise spends most of its time in the sandbox's runner importing
torch, and the host spent about 0.2 s importing the CLI, the judges and the probes, building the plan
and loading the cached answers before that runner was even started. The ``grade`` console script
(``grader.entry``) calls ``start_for_argv`` first: when the command line is a plain local ``grade
submit`` (its options read here the way click will read them; anything this module does not know,
and it does nothing), it picks the backend as ``grade_submission`` would (``select_sandbox``) and
starts a waiting runner for the public part (``start_warm``: the exercise track's runtime imported,
the limits of its ``exercise.toml`` in force, no submission, no input) while the rest of the CLI
imports. ``grade_submission`` then ``claim``-s it; the run uses it only when its limits and runtime
are the job's (``grader.grading.grade._Prestarted``), and runs cold otherwise, so a guess that turns
out wrong costs time, never a different result: the waiting runner is the one a warm pool would
hand out, with the same isolation as a cold run.

A runner that is never claimed (a usage error, a file that does not compile, ``--help`` after all)
is discarded when the process exits (``atexit``), and one whose parent is killed ends when its stdin
closes, as any waiting runner of the pool does.
"""

from __future__ import annotations

import atexit
import os
import threading
import tomllib
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

#: ``grade submit``'s options that take a value (``--opt V`` or ``--opt=V``), and its flags.
VALUE_OPTIONS = frozenset({"--out", "--sandbox", "--seed", "--view", "--format", "--export", "--server", "--token",
                           "--track"})
FLAGS = frozenset({"--json", "--require-isolation", "--quiet", "-q", "--verbose", "-v"})


@dataclass
class _Held:
    """A runner started ahead for ``grade submit`` and what it was started for."""

    sandbox: str
    require_isolation: bool
    backend: object
    selection: str
    warm: Future


_held: _Held | None = None
_lock = threading.Lock()


def submit_request(argv: list[str]) -> dict | None:
    """What a ``grade submit`` command line asks for, read the way click reads it, or None when it is
    not a plain local ``grade submit ID FILE`` (another command, ``--help``, ``--server``, an option
    this module does not know, a missing file).

    Returns:
        ``{"exercise_id", "file", "sandbox", "require_isolation", "track"}`` (``track`` None: the
        exercise's default).
    """
    if not argv or argv[0] != "submit":
        return None
    positional: list[str] = []
    options: dict[str, str] = {}
    flags: set[str] = set()
    i, only_positional = 1, False
    while i < len(argv):
        token = argv[i]
        if only_positional or not token.startswith("-") or token == "-":
            positional.append(token)
        elif token == "--":
            only_positional = True
        elif token in FLAGS:
            flags.add(token)
        else:
            name, eq, value = token.partition("=")
            if name not in VALUE_OPTIONS:
                return None  # --help, an unknown or abbreviated option: leave it all to click
            if not eq:
                i += 1
                if i >= len(argv):
                    return None
                value = argv[i]
            options[name] = value
        i += 1
    if len(positional) != 2 or "--server" in options or not Path(positional[1]).is_file():
        return None
    return {"exercise_id": positional[0], "file": positional[1], "sandbox": options.get("--sandbox", "auto"),
            "require_isolation": "--require-isolation" in flags, "track": options.get("--track")}


def track_limits(exercise_id: str, track: str | None) -> tuple[str, dict] | None:
    """``(track, limits)`` of an exercise as ``grader.grading.exercise.load_exercise`` reads them (the
    ``[limits]`` table, the track's own ``[tracks.<track>.limits]`` laid over it key by key), without
    validating the file; None for an unknown exercise or track or an unreadable file."""
    root = Path(os.environ.get("GRADER_HOME") or Path(__file__).resolve().parents[2])
    if not exercise_id or "/" in exercise_id or exercise_id.startswith("."):
        return None
    try:
        meta = tomllib.loads((root / "exercises" / exercise_id / "exercise.toml").read_text(encoding="utf-8"))
        framework = meta["framework"]
        track = track or framework
        limits = dict(meta.get("limits", {}))
        if track != framework:
            limits.update(meta["tracks"][track].get("limits", {}))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return track, limits


def start_for_argv(argv: list[str]) -> bool:
    """Start the public part's runner for the ``grade submit`` command line ``argv`` (without the
    program name), in a background thread; True when one is being started. Never raises: anything
    unexpected means no early start, and the grading starts its sandbox itself as before."""
    global _held
    try:
        request = submit_request(argv)
        found = track_limits(request["exercise_id"], request["track"]) if request else None
        if found is None:
            return False
        track, limits_table = found
        from grader.sandbox import select_sandbox  # noqa: PLC0415 - after the cheap checks above
        from grader.sandbox.base import Limits  # noqa: PLC0415
        from grader.sandbox.pool import PooledSandbox, supports_warm  # noqa: PLC0415

        limits = Limits(**limits_table)
        backend, selection = select_sandbox(request["sandbox"], require_isolation=request["require_isolation"])
        if isinstance(backend, PooledSandbox) or not supports_warm(backend):
            return False
        runtime = "torch" if track == "torch" else "numpy"
        warm: Future = Future()

        def start() -> None:
            try:
                warm.set_result(backend.start_warm(runtime, limits))
            except BaseException as exc:  # noqa: BLE001 - no runner ahead: the grading starts one cold
                warm.set_exception(exc)

        threading.Thread(target=start, name="early-sandbox", daemon=True).start()
        with _lock:
            _held = _Held(request["sandbox"], request["require_isolation"], backend, selection, warm)
        atexit.register(_discard)
        return True
    except Exception:  # noqa: BLE001 - an optimisation only: the grading starts its own sandbox
        return False


def claim(sandbox: str, require_isolation: bool) -> tuple[object, str, Future] | None:
    """The backend, the sentence of its selection and the future runner started ahead for this
    grading, once (later calls get None); None when nothing was started or it was started for
    another ``--sandbox`` / ``--require-isolation`` (that runner is then discarded)."""
    global _held
    with _lock:
        held, _held = _held, None
    if held is None:
        return None
    if (held.sandbox, held.require_isolation) != (sandbox, require_isolation):
        _discard_runner(held.warm)
        return None
    return held.backend, held.selection, held.warm


def _discard_runner(warm: Future) -> None:
    try:
        runner = warm.result(timeout=120)
    except BaseException:  # noqa: BLE001 - it never started: nothing to discard
        return
    runner.discard()


def _discard() -> None:
    """At exit: discard a runner nobody claimed."""
    global _held
    with _lock:
        held, _held = _held, None
    if held is not None:
        _discard_runner(held.warm)
