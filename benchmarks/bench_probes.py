"""What complexity probes cost: grading time of each exercise's reference with and without probes.

Runs alternately in one process (the reference-answer cache is cleared before each grading, so both
variants pay for the reference), takes the median of ``--repeat`` runs, and prints the extra
seconds and the ratio. Usage: ``python benchmarks/bench_probes.py [--repeat 3] [--sandbox process]``.
"""

from __future__ import annotations

import argparse
import os
import dataclasses
import statistics
import time

os.environ.setdefault("GRADER_REFERENCE_CACHE", "off")  # it times the reference: never read it from disk
from grader.grading import grade as grading
from grader.grading.exercise import exercise_ids, get_exercise


def without_probes(exercise):
    """The same exercise with its probes and complexity checks removed."""
    return dataclasses.replace(exercise, probes=(),
                               checks=tuple(c for c in exercise.checks if c.category != "complexity"))


def timed(exercise, sandbox: str, seed: int) -> float:
    grading._ANSWERS.clear()
    start = time.perf_counter()
    card = grading.grade_submission(exercise, exercise.reference_path, sandbox=sandbox, seed=seed)
    elapsed = time.perf_counter() - start
    if not card.all_passed:
        raise SystemExit(f"{exercise.id}: the reference did not pass ({card.status}: {card.status_message})")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sandbox", default="process")
    parser.add_argument("exercises", nargs="*")
    args = parser.parse_args()
    print(f"{'exercise':<18}{'with probes':>14}{'without':>10}{'probes cost':>14}{'ratio':>8}")
    for exercise_id in args.exercises or exercise_ids():
        ex = get_exercise(exercise_id)
        bare = without_probes(ex)
        timed(ex, args.sandbox, 1)  # warm-up: imports, page cache
        with_p, without_p = [], []
        for i in range(args.repeat):
            with_p.append(timed(ex, args.sandbox, 100 + i))
            without_p.append(timed(bare, args.sandbox, 100 + i))
        a, b = statistics.median(with_p), statistics.median(without_p)
        print(f"{exercise_id:<18}{a:>12.2f} s{b:>8.2f} s{a - b:>12.2f} s{a / b:>8.2f}")


if __name__ == "__main__":
    main()
