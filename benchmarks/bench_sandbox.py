"""Latency of `grade submit` under each sandbox backend, against the floor of starting the same runtime.

For a NumPy exercise (softmax) and a torch exercise (mha, skipped while it does not exist), the
median wall time of ``grade submit ID reference/ID.py --sandbox B`` is compared with the floor of
starting that backend's runtime and importing only what the exercise needs:

- docker: ``docker run --rm --network none IMAGE python -c "import numpy"`` (``import torch`` for mha);
- process: ``python -c "import numpy"`` (or torch) with the host's interpreter.

Every variant is measured in turn within one round, rounds repeated, so machine noise hits all of
them alike. Targets (issue 25): torch exercises within 1.5x of their floor in both sandboxes, NumPy
ones within 2x with Docker and 3x with the process sandbox (two interpreters); a wrong file (the
first mutant of the exercise's mistake bank, graded after an untimed warm-up, so its mutant answers
come from the cache as for any later submission at that seed) within 1.2x of the correct one.

    python benchmarks/bench_sandbox.py [--repeats 5] [--exercise softmax --exercise mha]
    python benchmarks/bench_sandbox.py --phases [--exercise mha] [--sandbox process]

``--phases`` profiles one ``grade submit`` per (exercise, track, file, sandbox) instead: the reference
of the track (a correct file) and the first mutant of its mistake bank (a wrong file), each graded
once untimed (to fill the reference and mutant caches, as any later submission at that seed finds
them) and then once measured by ``benchmarks/phases.py``, which wraps the grader's functions and
splits the wall time into interpreter start, CLI import, plan, reference (or cache), sandbox start,
the runner's NumPy/torch import, the submission's imports, its steps, probes, judging, diagnosis, scorecard and exit (printing and
process exit after the scorecard is written). Default: every exercise and track.

This is a benchmark, not a test: it prints ratios and never fails on them (exit 0 unless a
command itself failed).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Goals of issue 25 (grade submit of a correct file over the floor), by framework and sandbox: the
#: process sandbox starts two interpreters (the host's and the runner's), so NumPy gets 3x there.
TARGETS = {("numpy", "docker"): 2.0, ("numpy", "process"): 3.0, ("torch", "docker"): 1.5, ("torch", "process"): 1.5}
#: Goal for a wrong file (the first mutant of the bank): at most this much above the correct one.
WRONG_TARGET = 1.2
#: Exit codes of `grade submit` that mean "graded" (all passed / some failed).
GRADED = (0, 1)


def _timed(argv: list[str], ok_codes=(0,)) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode not in ok_codes:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.decode()[-800:]}")
    return elapsed


def _variants(exercise_id: str, framework: str, backends: list[str], image: str, out: Path,
              wrong: Path | None = None) -> dict:
    module = "torch" if framework == "torch" else "numpy"
    grade = shutil.which("grade") or "grade"
    reference = str(ROOT / "reference" / f"{exercise_id}.py")
    variants = {}
    for backend in backends:
        variants[(backend, "grade submit")] = (
            [grade, "submit", exercise_id, reference, "--sandbox", backend, "-q", "--seed", "1",
             "--out", str(out / f"{exercise_id}-{backend}.json")], GRADED)
        if wrong is not None:
            variants[(backend, "wrong")] = (
                [grade, "submit", exercise_id, str(wrong), "--sandbox", backend, "-q", "--seed", "1",
                 "--out", str(out / f"{exercise_id}-{backend}-wrong.json")], GRADED)
    if "docker" in backends:
        docker_cli = shutil.which("docker") or "docker"
        variants[("docker", "floor")] = ([docker_cli, "run", "--rm", "--network", "none", image, "python", "-c",
                                          f"import {module}"], (0,))
    if "process" in backends:
        variants[("process", "floor")] = ([sys.executable, "-c", f"import {module}"], (0,))
    return variants


PHASE_COLUMNS = [("interpreter", "interp"), ("early_start", "early"), ("cli_import", "cli"), ("plan", "plan"), ("reference", "ref"),
                 ("sandbox_start", "sbx"), ("runtime", "np/pt"), ("imports", "import"), ("steps", "steps"), ("probes", "probes"),
                 ("judging", "judge"), ("diagnosis", "diag"), ("scorecard", "card"), ("exit", "exit")]


def _phase_run(argv: list[str], out: Path, ok_codes=GRADED) -> dict:
    """One ``grade`` command under ``benchmarks/phases.py``: its phases (seconds) and total wall."""
    import json  # noqa: PLC0415
    import os  # noqa: PLC0415
    out.unlink(missing_ok=True)
    t0 = time.time()
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "phases.py"), str(out), "--", *argv],
                          cwd=ROOT, env={**os.environ, "BENCH_T0": repr(t0)}, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, check=False)
    ended = time.time()
    if proc.returncode not in ok_codes or not out.is_file():
        raise RuntimeError(f"grade {' '.join(argv)} exited {proc.returncode}: {proc.stderr.decode()[-800:]}")
    doc = json.loads(out.read_text())
    doc["phases"]["exit"] = ended - doc["written_at"]
    doc["total"] = ended - t0
    return doc


def phases(exercise_ids: list[str] | None, backends: list[str]) -> int:
    """Print the per-phase profile (see the module docstring); returns 0."""
    from grader.grading.exercise import exercise_ids as all_ids  # noqa: PLC0415
    from grader.grading.exercise import get_exercise  # noqa: PLC0415

    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-phases-") as tmp:
        tmp_path = Path(tmp)
        for exercise_id in exercise_ids or all_ids():
            for track in get_exercise(exercise_id).tracks:
                exercise = get_exercise(exercise_id, track=track)
                files = [("correct", Path(exercise.reference_path))]
                if exercise.mistakes:
                    wrong = tmp_path / f"{exercise_id}_{track}_{exercise.mistakes[0].name}.py"
                    wrong.write_text(exercise.mistakes[0].source, encoding="utf-8")
                    files.append(("wrong", wrong))
                for kind, path in files:
                    for backend in backends:
                        argv = ["submit", exercise_id, str(path), "--track", track, "--sandbox", backend, "-q",
                                "--seed", "1", "--out", str(tmp_path / "card.json")]
                        _phase_run(argv, tmp_path / "phases.json")  # fills the caches, untimed
                        doc = _phase_run(argv, tmp_path / "phases.json")
                        rows.append((exercise_id, track, kind, backend, doc))
    head = f"{'exercise':<26} {'track':<6} {'file':<8} {'sandbox':<8}"
    print(head + "".join(f"{short:>7}" for _, short in PHASE_COLUMNS) + f"{'total':>7}  torch@host")
    for exercise_id, track, kind, backend, doc in rows:
        cells = "".join(f"{doc['phases'].get(name, 0.0):>7.2f}" for name, _ in PHASE_COLUMNS)
        print(f"{exercise_id:<26} {track:<6} {kind:<8} {backend:<8}{cells}{doc['total']:>7.2f}  "
              f"{'yes' if doc['torch_on_host'] else 'no'}")
    print("(seconds of one grading after an untimed one at the same seed; ref overlaps sbx..probes when it "
          "runs; sbx = sandbox start and stop, interpreter and frame transfer: the part of each run "
          "not reported by the runner; np/pt = the runner importing NumPy/torch and loading the plan; sandbox columns are summed over "
          "the public and the hidden part's runs, which overlap: the hidden sandbox is started while the public one runs)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--exercise", action="append", help="exercise ids (default: softmax and mha; "
                        "with --phases every exercise)")
    parser.add_argument("--phases", action="store_true", help="per-phase profile of one grading instead")
    parser.add_argument("--sandbox", action="append", choices=["process", "docker"],
                        help="sandboxes (default: process, and docker when its engine is reachable)")
    args = parser.parse_args(argv)

    from grader.grading.exercise import UnknownExercise, get_exercise  # noqa: PLC0415
    from grader.sandbox.docker import DockerSandbox  # noqa: PLC0415
    from grader.sandbox.image import image_name  # noqa: PLC0415

    backends = ["process"]
    if args.sandbox:
        backends = list(dict.fromkeys(args.sandbox))
    if "docker" in backends or not args.sandbox:
        ready, why = DockerSandbox.if_ready()
        if ready is not None and "docker" not in backends:
            backends.insert(0, "docker")
        elif ready is None:
            backends = [b for b in backends if b != "docker"]
            print(f"docker: skipped ({why})")
    if args.phases:
        return phases(args.exercise, backends)

    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        for exercise_id in args.exercise or ["softmax", "mha"]:
            try:
                exercise = get_exercise(exercise_id)
            except (UnknownExercise, Exception) as exc:  # noqa: BLE001 - an exercise still being written
                print(f"{exercise_id}: skipped ({type(exc).__name__}: {exc})")
                continue
            if not (ROOT / "reference" / f"{exercise_id}.py").is_file():
                print(f"{exercise_id}: skipped (no reference/{exercise_id}.py)")
                continue
            framework = "torch" if exercise.framework == "torch" else "numpy"
            wrong = None
            if exercise.mistakes:
                wrong = Path(tmp) / f"{exercise_id}-{exercise.mistakes[0].name}.py"
                wrong.write_text(exercise.mistakes[0].source, encoding="utf-8")
            variants = _variants(exercise_id, framework, backends, image_name(), Path(tmp), wrong)
            for argv, codes in variants.values():  # warm caches once, untimed
                _timed(argv, codes)
            times: dict = {key: [] for key in variants}
            for _ in range(args.repeats):
                for key, (argv, codes) in variants.items():
                    times[key].append(_timed(argv, codes))
            for backend in backends:
                grade_s = statistics.median(times[(backend, "grade submit")])
                floor_s = statistics.median(times[(backend, "floor")])
                wrong_s = statistics.median(times[(backend, "wrong")]) if (backend, "wrong") in times else None
                rows.append((exercise_id, framework, backend, grade_s, floor_s, wrong_s))

    print(f"\n{'exercise':<10} {'backend':<8} {'grade submit':>13} {'floor':>8} {'ratio':>6} {'target':>7}  ok"
          f"  {'wrong':>7} {'/correct':>8} {'target':>7}  ok")
    for exercise_id, framework, backend, grade_s, floor_s, wrong_s in rows:
        ratio, target = grade_s / floor_s, TARGETS[(framework, backend)]
        wrong_cells = "" if wrong_s is None else (
            f"  {wrong_s:>6.2f}s {wrong_s / grade_s:>8.2f} {WRONG_TARGET:>6.1f}x  "
            f"{'yes' if wrong_s / grade_s <= WRONG_TARGET else 'NO'}")
        print(f"{exercise_id:<10} {backend:<8} {grade_s:>12.2f}s {floor_s:>7.2f}s {ratio:>6.2f} {target:>6.1f}x  "
              f"{'yes' if ratio <= target else 'NO '}{wrong_cells}")
    print(f"(medians of {args.repeats} alternated rounds; floor = start the runtime and import "
          "only what the exercise needs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
