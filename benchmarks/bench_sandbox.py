"""Latency of `grade submit` under each sandbox backend, against the floor of starting the same runtime.

For a NumPy exercise (softmax) and a torch exercise (mha, skipped while it does not exist), the
median wall time of ``grade submit ID reference/ID.py --sandbox B`` is compared with the floor of
starting that backend's runtime and importing only what the exercise needs:

- docker: ``docker run --rm --network none IMAGE python -c "import numpy"`` (``import torch`` for mha);
- process: ``python -c "import numpy"`` (or torch) with the host's interpreter.

Every variant is measured in turn within one round, rounds repeated, so machine noise hits all of
them alike. Targets: NumPy exercises within 2x of their floor, torch exercises within 1.5x.

    python benchmarks/bench_sandbox.py [--repeats 5] [--exercise softmax --exercise mha]

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
TARGETS = {"numpy": 2.0, "torch": 1.5}
#: Exit codes of `grade submit` that mean "graded" (all passed / some failed).
GRADED = (0, 1)


def _timed(argv: list[str], ok_codes=(0,)) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode not in ok_codes:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.decode()[-800:]}")
    return elapsed


def _variants(exercise_id: str, framework: str, backends: list[str], image: str, out: Path) -> dict:
    module = "torch" if framework == "torch" else "numpy"
    grade = shutil.which("grade") or "grade"
    reference = str(ROOT / "reference" / f"{exercise_id}.py")
    variants = {}
    for backend in backends:
        variants[(backend, "grade submit")] = (
            [grade, "submit", exercise_id, reference, "--sandbox", backend, "-q", "--seed", "1",
             "--out", str(out / f"{exercise_id}-{backend}.json")], GRADED)
    if "docker" in backends:
        docker_cli = shutil.which("docker") or "docker"
        variants[("docker", "floor")] = ([docker_cli, "run", "--rm", "--network", "none", image, "python", "-c",
                                          f"import {module}"], (0,))
    if "process" in backends:
        variants[("process", "floor")] = ([sys.executable, "-c", f"import {module}"], (0,))
    return variants


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--exercise", action="append", help="exercise ids (default: softmax and mha)")
    args = parser.parse_args(argv)

    from grader.grading.exercise import UnknownExercise, get_exercise  # noqa: PLC0415
    from grader.sandbox.docker import DockerSandbox  # noqa: PLC0415
    from grader.sandbox.image import image_name  # noqa: PLC0415

    backends = ["process"]
    ready, why = DockerSandbox.if_ready()
    if ready is not None:
        backends.insert(0, "docker")
    else:
        print(f"docker: skipped ({why})")

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
            variants = _variants(exercise_id, framework, backends, image_name(), Path(tmp))
            for argv, codes in variants.values():  # warm caches once, untimed
                _timed(argv, codes)
            times: dict = {key: [] for key in variants}
            for _ in range(args.repeats):
                for key, (argv, codes) in variants.items():
                    times[key].append(_timed(argv, codes))
            for backend in backends:
                grade_s = statistics.median(times[(backend, "grade submit")])
                floor_s = statistics.median(times[(backend, "floor")])
                rows.append((exercise_id, framework, backend, grade_s, floor_s))

    print(f"\n{'exercise':<10} {'backend':<8} {'grade submit':>13} {'floor':>8} {'ratio':>6} {'target':>7}  ok")
    for exercise_id, framework, backend, grade_s, floor_s in rows:
        ratio, target = grade_s / floor_s, TARGETS[framework]
        print(f"{exercise_id:<10} {backend:<8} {grade_s:>12.2f}s {floor_s:>7.2f}s {ratio:>6.2f} {target:>6.1f}x  "
              f"{'yes' if ratio <= target else 'NO'}")
    print(f"(medians of {args.repeats} alternated rounds; floor = start the runtime and import "
          "only what the exercise needs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
