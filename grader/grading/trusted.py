"""The warm path for trusted files: run a plan in this process instead of a fresh sandbox.

``grade selfcheck`` grades the reference, the stub, the samples and every mutant of the mistake
bank, all written by exercise authors. Starting an interpreter (and importing torch) per file is
most of its time, so these files run here, through the same ``PlanExecutor``
(``grader/run/runner.py``) that the sandbox runs and that answers for the reference, with the
same wire plan and arrays: the results are the ones the sandbox would return
(``tests/test_trusted.py`` compares both paths file by file).

Never use this for a file a candidate wrote: nothing here isolates anything. The CLI's
``--sandbox`` choices do not include it; only ``grader.cohort.selfcheck`` constructs it, for files
of the repository.
"""

from __future__ import annotations

import contextlib
import copy
import io
import itertools
import sys
import threading
import time
import types
import warnings

import numpy as np

from grader.run.channel import RunResults, StepResult, display_text
from grader.run.runner import PlanExecutor, _ForbiddenFinder, describe_exception
from grader.sandbox.base import Limits, SandboxInfo, SandboxJob, SandboxRun

_COUNTER = itertools.count()
#: One trusted run at a time: tracemalloc, the NumPy work counter, sys.stdout and sys.meta_path are
#: process-wide.
RUN_LOCK = threading.Lock()


class ProbeReplay:
    """The results of one trusted file's probe steps, kept from its first run and given again to its
    runs at other seeds (``grade selfcheck --seeds N``).

    A probe's steps are drawn from ``grader.grading.grade.PROBE_SEED`` at every seed and come last in
    the plan, after every case, so measuring them again at another seed proves nothing about the seed
    (the cases, public and hidden, still run at each one). Only the trailing block of the plan whose
    step ids are all in ``ids`` is replayed; steps before it always run.

    Args:
        ids: the ids of the plan's probe steps (those of a check that ``Exercise.probes`` sweeps:
            warm-ups, constructors and prefills included).
    """

    def __init__(self, ids: frozenset[str]):
        self.ids = frozenset(ids)
        self.results: dict[str, StepResult] = {}

    def tail(self, steps: list[dict]) -> int:
        """Index of the first step of the trailing block of ``steps`` whose ids are all probe ids."""
        start = len(steps)
        while start > 0 and steps[start - 1]["id"] in self.ids:
            start -= 1
        return start

    def covers(self, steps: list[dict]) -> bool:
        """Whether every step of that block was kept from an earlier run."""
        return all(step["id"] in self.results for step in steps)


class TrustedInProcess:
    """A ``Sandbox`` look-alike that runs the job's source in this process (trusted files only).

    Args:
        label: how the file is named in tracebacks (e.g. ``mistakes/logits_divided_by_d_k.py``).
        measure_lock: held around the run; pass the lock that serialises the reference's measured
            runs (``grader.grading.grade._MEASURE_LOCK``), since both use process-wide instruments.
        replay: this file's ``ProbeReplay``, shared by its runs at several seeds; None runs every step.
    """

    name = "in-process"

    def __init__(self, label: str = "trusted.py", measure_lock: threading.Lock | None = None,
                 replay: ProbeReplay | None = None):
        self.label = label
        self.measure_lock = measure_lock
        self.replay = replay

    def info(self) -> SandboxInfo:
        """Recorded in the scorecard: no isolation at all, by design."""
        return SandboxInfo(backend="in-process", isolation={"trusted_file": True, "isolated": False})

    def run(self, job: SandboxJob, limits: Limits) -> SandboxRun:
        """Import ``job.submission`` as a fresh module and run ``job.plan`` on it.

        Returns:
            A ``SandboxRun`` whose results have the form the sandbox's decoded channel has
            (``started``, ``import``, steps, ``done``, forbidden imports); printed output is captured.
        """
        started = time.monotonic()
        results = RunResults(started={"pid": 0})
        attempts: list[str] = []
        buffer = io.StringIO()
        name = f"grader_trusted_{next(_COUNTER)}"
        finder = _ForbiddenFinder(job.plan.get("forbidden_modules", []), attempts)
        lock = self.measure_lock or contextlib.nullcontext()
        with RUN_LOCK, lock, contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sys.meta_path.insert(0, finder)
            module = types.ModuleType(name)
            module.__file__ = self.label
            sys.modules[name] = module
            try:
                import_report: dict = {"ok": False, "exception": None}
                try:
                    exec(compile(job.submission, self.label, "exec"), module.__dict__)  # noqa: S102 - trusted file
                    import_report["ok"] = True
                except BaseException as exc:  # noqa: BLE001 - reported like the runner reports it
                    if isinstance(exc, KeyboardInterrupt):
                        raise
                    import_report["exception"] = describe_exception(exc, self.label)
                import_report["forbidden_imports"] = list(attempts)
                results.import_report = import_report
                if import_report["ok"]:
                    steps = job.plan["steps"]
                    start = self.replay.tail(steps) if self.replay is not None else len(steps)
                    replayed = start < len(steps) and self.replay.covers(steps[start:])
                    plan = {**job.plan, "steps": steps[:start]} if replayed else job.plan
                    executor = PlanExecutor(plan, job.arrays, module, module_file=self.label, use_alarm=False)

                    def emit(report: dict, out: dict[str, np.ndarray]) -> None:
                        report["forbidden_imports"] = list(attempts)
                        results.steps[report["id"]] = StepResult(report=report, arrays=out)

                    with np.errstate(all="ignore"):
                        executor.run(emit)
                    for step in steps[start:]:
                        if replayed:
                            kept = self.replay.results[step["id"]]
                            results.steps[step["id"]] = StepResult(report=copy.deepcopy(kept.report),
                                                                   arrays=dict(kept.arrays))
                        elif self.replay is not None and step["id"] in results.steps:
                            got = results.steps[step["id"]]
                            self.replay.results[step["id"]] = StepResult(report=copy.deepcopy(got.report),
                                                                         arrays=dict(got.arrays))
                results.done = True
            finally:
                sys.meta_path.remove(finder)
                sys.modules.pop(name, None)
        results.forbidden_imports = list(attempts)
        text = buffer.getvalue().encode("utf-8", "replace")
        return SandboxRun(results=results, exit_code=0, output=display_text(text[:limits.output_bytes]),
                          output_truncated=len(text) > limits.output_bytes,
                          wall_seconds=time.monotonic() - started)
