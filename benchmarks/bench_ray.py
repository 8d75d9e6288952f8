"""Ray vs local: a cohort of sample submissions graded by ``grade batch --jobs 2`` (LocalExecutor) and
by Ray on two simulated nodes of this machine (``ray.cluster_utils.Cluster``: a head that grades
nothing, two nodes of one CPU and one ``grader_sandbox`` each), at the same seed, each from a cold
reference cache. Prints wall seconds and submissions per minute of each, their ratio, Ray's start-up
and node check, whether the scorecards agree, and the per-submission cost by exercise (median
``duration_s`` of the scorecards, seconds).

    python benchmarks/bench_ray.py [--count 200] [--sandbox process] [--seed 1]

On one machine both runs share the same two cores, so the ratio measures Ray's overhead, not a
speed-up; ``docs/capacity.md`` turns the per-submission figures into a plan for N real nodes.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from grader.cohort.batch import batch
from grader.cohort.executors import LocalExecutor
from grader.grading.exercise import exercise_ids, project_root
from grader.grading.scorecard import read_scorecard

NODE_STORE = 80 * 1024 * 1024


def make_cohort(root: Path, count: int, exercises: list[str]) -> int:
    """``count`` sample files, round-robin over ``exercises`` and their samples, as
    ``root/<exercise>/<candidate>.py`` (a sample appears several times under different candidates)."""
    samples = project_root() / "submissions" / "samples"
    pools = [itertools.cycle(sorted((samples / ex).glob("*.py"))) for ex in exercises
             if list((samples / ex).glob("*.py"))]
    names = [ex for ex in exercises if list((samples / ex).glob("*.py"))]
    for i in range(count):
        ex = names[i % len(names)]
        path = next(pools[i % len(names)])
        (root / ex).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, root / ex / f"c{i:04d}-{path.stem}.py")
    return count


def essence(out: Path) -> dict:
    """(exercise, candidate) -> status, score and every check's verdict."""
    return {(p.parent.name, p.stem): (c.status, c.score, tuple((k.id, k.verdict) for k in c.checks))
            for p in sorted(out.glob("*/*.json")) for c in [read_scorecard(p)]}


def per_exercise(out: Path) -> dict[str, list[float]]:
    """Exercise -> the scorecards' ``duration_s`` (seconds)."""
    found = defaultdict(list)
    for p in out.glob("*/*.json"):
        found[p.parent.name].append(read_scorecard(p).duration_s)
    return found


def timed_batch(root: Path, out: Path, cache: Path, **kwargs) -> float:
    os.environ["GRADER_CACHE_DIR"] = str(cache)
    start = time.perf_counter()
    result = batch(root, out, force=True, **kwargs)
    seconds = time.perf_counter() - start
    assert not result.interrupted
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=200, help="submissions in the cohort")
    parser.add_argument("--sandbox", default="process")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--exercises", nargs="+", default=None, help="default: every exercise with samples")
    args = parser.parse_args()
    import ray  # noqa: PLC0415 - pip install -e '.[ray]'
    from ray.cluster_utils import Cluster  # noqa: PLC0415

    from grader.cohort.ray_executor import RESOURCE, RayExecutor  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
        tmp = Path(tmp)
        root = tmp / "cohort"
        n = make_cohort(root, args.count, args.exercises or exercise_ids())
        print(f"cohort: {n} submissions over {len(list(root.iterdir()))} exercises, sandbox {args.sandbox}, "
              f"seed {args.seed}")

        local_s = timed_batch(root, tmp / "out-local", tmp / "cache-local", sandbox=args.sandbox, seed=args.seed,
                              executor=LocalExecutor(2))
        print(f"local --jobs 2: {n} in {local_s:.1f} s = {60 * n / local_s:.1f} per minute")

        start = time.perf_counter()
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "object_store_memory": NODE_STORE,
                                                                "include_dashboard": False})
        try:
            for i in range(2):
                cluster.add_node(num_cpus=1, resources={RESOURCE: 1}, object_store_memory=NODE_STORE,
                                 env_vars={"GRADER_CACHE_DIR": str(tmp / f"cache-node{i}")})
            ray.init(address=cluster.address, log_to_driver=False)
            executor = RayExecutor("auto", sandbox=args.sandbox)
            startup_s = time.perf_counter() - start
            ray_s = timed_batch(root, tmp / "out-ray", tmp / "cache-driver", sandbox=args.sandbox, seed=args.seed,
                                executor=executor)
        finally:
            ray.shutdown()
            cluster.shutdown()
        print(f"Ray, 2 simulated nodes x 1 slot: {n} in {ray_s:.1f} s = {60 * n / ray_s:.1f} per minute "
              f"(+ {startup_s:.1f} s to start the cluster and check the nodes)")
        print(f"ratio Ray / local wall time: {ray_s / local_s:.2f} (same 2 cores: overhead, not speed-up)")
        same = essence(tmp / "out-local") == essence(tmp / "out-ray")
        print(f"scorecards identical (status, score, every verdict): {same}")
        print("per-submission cost by exercise (median duration_s, seconds; local | Ray):")
        local, remote = per_exercise(tmp / "out-local"), per_exercise(tmp / "out-ray")
        for ex in sorted(local):
            print(f"  {ex:20s} n={len(local[ex]):3d}  {statistics.median(local[ex]):6.2f} | "
                  f"{statistics.median(remote.get(ex, [float('nan')])):6.2f}")
        every = [d for ds in local.values() for d in ds]
        print(f"  {'all':20s} n={len(every):3d}  mean {statistics.fmean(every):.2f} s of one slot per submission")


if __name__ == "__main__":
    main()
