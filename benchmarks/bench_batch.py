"""Batch throughput: submissions graded per minute by ``grade batch`` at --jobs 1 and --jobs 2.

Copies sample submissions (correct and wrong, several exercises) into a temporary
``<candidate>/<exercise>.py`` folder and grades it from scratch (``force=True``) once per job
count, with the process sandbox unless ``--sandbox`` says otherwise. Prints one line per job count.

    python benchmarks/bench_batch.py [--count N] [--jobs 1 2] [--sandbox process]
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import tempfile
import time
from pathlib import Path

from grader.cohort.batch import batch, discover
from grader.grading.exercise import exercise_ids, project_root


def make_cohort(root: Path, count: int, exercises: list[str]) -> int:
    """Copy up to ``count`` samples, round-robin over exercises; returns how many were copied."""
    samples = project_root() / "submissions" / "samples"
    pools = [[(ex, p) for p in sorted((samples / ex).glob("*.py"))] for ex in exercises]
    pools = [p for p in pools if p]
    made = 0
    for ex, path in itertools.islice((x for group in itertools.zip_longest(*pools) for x in group if x), count):
        folder = root / f"{path.stem}-{ex}"
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, folder / f"{ex}.py")
        made += 1
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=12, help="submissions in the cohort")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--sandbox", default="process")
    parser.add_argument("--exercises", nargs="+", default=None, help="default: every exercise with samples")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        root = Path(tmp) / "cohort"
        n = make_cohort(root, args.count, args.exercises or exercise_ids())
        print(f"cohort: {n} submissions ({len(discover(root).items)} discovered), sandbox {args.sandbox}")
        for jobs in args.jobs:
            start = time.perf_counter()
            result = batch(root, Path(tmp) / f"out-{jobs}", jobs=jobs, sandbox=args.sandbox, seed=1, force=True)
            seconds = time.perf_counter() - start
            graded = sum(1 for o in result.outcomes if not o.skipped)
            print(f"--jobs {jobs}: {graded} submissions in {seconds:.1f} s = {60 * graded / seconds:.1f} per minute")


if __name__ == "__main__":
    main()
