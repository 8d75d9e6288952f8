"""Per-phase profile of one ``grade submit``, for ``bench_sandbox.py --phases``.

Run as ``python benchmarks/phases.py OUT.json -- submit ID FILE --sandbox B ...`` with ``BENCH_T0``
(the parent's ``time.time()`` just before it started this process) in the environment. It wraps the
grader's own functions (no change to the grader) and writes, when the scorecard is written, the
seconds of each phase to OUT.json:

- ``interpreter``: from the parent's start to this script's first line (interpreter and site start);
- ``early_start``: ``grader.sandbox.early.start_for_argv``, as the ``grade`` script calls it first
  (reading the command line and ``exercise.toml``, choosing the backend, starting the public part's
  runner in the background);
- ``cli_import``: importing ``grader.cli`` (click, rich, the grader's modules);
- ``plan``: ``build_plan``; ``reference``: the reference's answers from the on-disk cache
  (``reference_cache.load``) or computed (``answers_for``; overlapped with the sandbox when torch);
- ``sandbox``: each part's run (``run_with_restarts``), split from the runner's own reports into
  ``runtime`` (the runner importing NumPy, torch for a torch plan, and loading the plan: the
  ``started`` frame's ``setup_s``), ``sandbox_start`` (process or container start and stop, the
  interpreter, frame transfer: the rest), ``imports`` (the submission's import,
  ``import_report.seconds``), ``steps`` (value steps' ``seconds``) and
  ``probes`` (measured steps' ``seconds``);
- ``judging``: ``_judge`` less ``diagnosis`` (``apply_bank``: the mistake bank's replay);
- ``scorecard``: ``write_scorecard``; ``exit`` is what the parent sees after that (printing, exit).

Times are wall seconds on one clock (``time.time()``) shared with the parent.
"""

from __future__ import annotations

import time

T_SCRIPT = time.time()

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from collections import defaultdict  # noqa: E402

PHASES: dict[str, float] = defaultdict(float)
STEPS: list[tuple[str, float]] = []


def _timed(module, name: str, phase: str, after=None) -> None:
    real = getattr(module, name)

    def wrapper(*args, **kwargs):
        started = time.time()
        try:
            result = real(*args, **kwargs)
        finally:
            PHASES[phase] += time.time() - started
        if after is not None:
            after(result, time.time() - started)
        return result

    setattr(module, name, wrapper)


def _split_run(result, wall: float) -> None:
    run = result[0]
    res = getattr(run, "results", None)
    if res is None:
        return
    imports = float((res.import_report or {}).get("seconds") or 0.0)
    setup = (res.started or {}).get("setup_s")
    setup = float(setup) if isinstance(setup, (int, float)) else 0.0
    PHASES["runtime"] += setup
    steps = probes = 0.0
    for sid, step in res.steps.items():
        seconds = step.report.get("seconds")
        seconds = float(seconds) if isinstance(seconds, (int, float)) else 0.0
        if step.report.get("measure"):
            probes += seconds
        else:
            steps += seconds
        STEPS.append((sid, seconds))
    PHASES["imports"] += imports
    PHASES["steps"] += steps
    PHASES["probes"] += probes
    PHASES["sandbox_start"] += max(0.0, wall - setup - imports - steps - probes)


def main(argv: list[str]) -> None:
    out, args = argv[0], argv[argv.index("--") + 1:]
    t0 = float(os.environ.get("BENCH_T0", T_SCRIPT))
    PHASES["interpreter"] = T_SCRIPT - t0
    started = time.time()
    from grader.sandbox.early import start_for_argv  # noqa: PLC0415 - as the `grade` script does (grader.entry)

    start_for_argv(args)
    PHASES["early_start"] = time.time() - started
    started = time.time()
    import grader.cli as cli  # noqa: PLC0415
    from grader.grading import grade, reference_cache, scorecard  # noqa: PLC0415
    PHASES["cli_import"] = time.time() - started

    _timed(grade, "build_plan", "plan")
    _timed(reference_cache, "load", "reference")
    _timed(grade, "answers_for", "reference")
    _timed(grade, "run_with_restarts", "sandbox", _split_run)
    _timed(grade, "apply_bank", "diagnosis")
    _timed(grade, "_judge", "judging_and_diagnosis")
    real_write = scorecard.write_scorecard

    def write(*a, **k):
        w0 = time.time()
        try:
            return real_write(*a, **k)
        finally:
            now = time.time()
            PHASES["scorecard"] += now - w0
            PHASES["judging"] = PHASES["judging_and_diagnosis"] - PHASES["diagnosis"]
            doc = {"phases": {k: round(v, 4) for k, v in PHASES.items() if k != "judging_and_diagnosis"},
                   "written_at": now, "t0": t0, "steps": len(STEPS),
                   "slowest_steps": sorted(STEPS, key=lambda s: -s[1])[:3],
                   "torch_on_host": "torch" in sys.modules}
            with open(out, "w", encoding="utf-8") as fh:
                json.dump(doc, fh)

    scorecard.write_scorecard = write
    sys.argv = ["grade", *args]
    cli.main()


if __name__ == "__main__":
    main(sys.argv[1:])
