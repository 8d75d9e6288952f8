"""Batch throughput: submissions graded per minute by ``grade batch`` at --jobs 1 and --jobs 2.

Copies sample submissions (correct and wrong, several exercises) into a temporary
``<candidate>/<exercise>.py`` folder and grades it from scratch (``force=True``) once per job
count and warm-pool size (``--warm``: sandboxes each grading process keeps started ahead, as
``grade batch --warm``; 0 is the cold path), with the process sandbox unless ``--sandbox`` says
otherwise. Prints one line per run with the load average over it: these are wall-clock figures, and
on a shared 2-core machine they follow the load; report them only from a quiet machine.

    python benchmarks/bench_batch.py [--count N] [--jobs 1 2] [--warm 1 0] [--sandbox process]

Then, per warm size, the goals of issue 25 as ratios of this one run: the throughput of the largest
``--jobs`` over ``--jobs 1`` (goal >= 1.7x on two cores) and the median seconds of a slot a torch
submission took (its scorecard's ``duration_s``; goal <= 3 s in a warm batch).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
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
    parser.add_argument("--warm", type=int, nargs="+", default=[1],
                        help="warm sandboxes per runtime and grading process, one run each (0: cold)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        root = Path(tmp) / "cohort"
        n = make_cohort(root, args.count, args.exercises or exercise_ids())
        print(f"cohort: {n} submissions ({len(discover(root).items)} discovered), sandbox {args.sandbox}")
        for warm in args.warm:
            rates, torch_slots = {}, []
            for jobs in args.jobs:
                load0, start = os.getloadavg()[0], time.perf_counter()
                result = batch(root, Path(tmp) / f"out-{jobs}-{warm}", jobs=jobs, sandbox=args.sandbox, seed=1,
                               force=True, warm={"numpy": warm, "torch": warm})
                seconds = time.perf_counter() - start
                graded = sum(1 for o in result.outcomes if not o.skipped)
                print(f"--jobs {jobs} --warm {warm}: {graded} submissions in {seconds:.1f} s = "
                      f"{60 * graded / seconds:.1f} per minute (load average {load0:.1f} -> {os.getloadavg()[0]:.1f})")
                rates[jobs] = graded / seconds
                for o in result.outcomes:
                    try:
                        card = json.loads(Path(o.scorecard).read_text())
                    except (OSError, ValueError):
                        continue
                    if (card.get("exercise") or {}).get("track") == "torch" and card.get("duration_s") is not None:
                        torch_slots.append(float(card["duration_s"]))
            if 1 in rates and len(rates) > 1:
                top = max(rates)
                ratio = rates[top] / rates[1]
                print(f"--warm {warm}: --jobs {top} / --jobs 1 throughput = {ratio:.2f}x (goal >= 1.7x on two cores: "
                      f"{'met' if ratio >= 1.7 else 'NOT met'})")
            if torch_slots:
                slot = statistics.median(torch_slots)
                print(f"--warm {warm}: a torch submission's slot, median of {len(torch_slots)} over the --jobs runs = {slot:.2f} s "
                      f"(goal <= 3 s warm: {'met' if slot <= 3.0 else 'NOT met'})")


if __name__ == "__main__":
    main()
