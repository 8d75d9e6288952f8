"""Cost of grading in two sandboxes (issue 20: the public part, then the hidden part in a fresh one).

Times ``grade_submission`` of an exercise's reference, ``--rounds`` times after one warm-up (the
reference's answers cached, so the figure is the sandboxes' and the judging's), and prints the median
and the spread. Run it once with this tree and once with a tree from before the split, e.g.

    PYTHONPATH=/path/to/old/tree python benchmarks/bench_split.py softmax mha --sandbox process
    PYTHONPATH=$PWD python benchmarks/bench_split.py softmax mha --sandbox process
"""

from __future__ import annotations

import argparse
import statistics
import time

from grader.grading.exercise import get_exercise
from grader.grading.grade import grade_submission


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exercises", nargs="+")
    parser.add_argument("--sandbox", default="process")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    for exercise_id in args.exercises:
        exercise = get_exercise(exercise_id)
        times = []
        for i in range(args.rounds + 1):
            start = time.perf_counter()
            card = grade_submission(exercise, exercise.reference_path, sandbox=args.sandbox, seed=args.seed)
            if i:  # the first round computes and caches the reference's answers
                times.append(time.perf_counter() - start)
            assert card.status == "graded", card.status_message
        print(f"{exercise_id} {args.sandbox}: median {statistics.median(times):.2f} s "
              f"(min {min(times):.2f}, max {max(times):.2f}) over {len(times)} gradings")


if __name__ == "__main__":
    main()
