"""Same score under load (issue 24 item 5): the corpus graded quietly and on a busy machine agrees.

Every sample (``submissions/samples/<exercise>[/<track>]/*.py``), every bank mutant (the patched
reference, as ``grade selfcheck`` builds it) and every confuser of every exercise and track is
copied into a ``grade batch`` folder (``<track>/<kind>-<name>/<exercise>.py``, graded with
``--track``), then graded twice per seed:

* quiet: ``--jobs 1``, nothing else running;
* loaded: ``--jobs 2`` while two other processes keep both cores busy (a spin loop each).

For each file the two scorecards must agree on the status, the score and every check's verdict.
A difference is printed as ``file: check quiet -> loaded``; the exit code is 1 when there is any,
0 otherwise. Where a verdict depends on time it must depend on counts or CPU time, or be skipped
without charge: this is the proof, over the whole corpus, that none does.

    python benchmarks/bench_load.py [--exercises softmax mha] [--seeds 1 2] [--limit N]
                                    [--sandbox process|docker] [--keep DIR]

The whole corpus is several hundred files (about an hour per pass on two cores); ``--limit`` takes
the first N files of each exercise and track (samples first), and ``--exercises`` narrows it.
``tests/test_same_score_under_load.py`` runs the same comparison on a few files that have a probe or
a timing-sensitive check, as a ``slow`` test.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from grader.cohort.batch import batch
from grader.grading.exercise import exercise_ids, get_exercise, project_root


def corpus(exercises: list[str], limit: int | None = None) -> list[tuple[str, str, str, str]]:
    """``(exercise, track, name, source)`` of every sample, bank mutant and confuser, samples first;
    at most ``limit`` per exercise and track."""
    out = []
    samples = project_root() / "submissions" / "samples"
    for eid in exercises:
        for track in get_exercise(eid).tracks:
            ex = get_exercise(eid, track=track)
            found = []
            folder = ex.samples_path if ex.samples_path.is_dir() else samples / eid
            found += [(f"sample-{p.stem}", p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.py"))]
            found += [(f"mutant-{m.name}", m.source) for m in ex.mistakes]
            if ex.confusers_dir.is_dir():
                found += [(f"confuser-{p.stem}", p.read_text(encoding="utf-8"))
                          for p in sorted(ex.confusers_dir.glob("*.py"))]
            out += [(eid, track, name, source) for name, source in found[:limit]]
    return out


def lay_out(files: list[tuple[str, str, str, str]], root: Path) -> list[Path]:
    """Write ``files`` as ``root/<track>/<exercise>--<name>/<exercise>.py``; the track folders made."""
    tracks = set()
    for eid, track, name, source in files:
        folder = root / track / f"{eid}--{name}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{eid}.py").write_text(source, encoding="utf-8")
        tracks.add(root / track)
    return sorted(tracks)


def _spin() -> None:
    while True:
        pass


@contextmanager
def busy_cores(n: int = 2):
    """``n`` processes spinning on the CPU for the duration of the block."""
    procs = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    try:
        yield
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.join(10)


def grade_all(tracks: list[Path], out: Path, *, jobs: int, seed: int, sandbox: str) -> dict[str, dict]:
    """Grade every track folder with ``grade batch`` (``--track``, ``--force``); returns, per
    ``<track>/<candidate>``, ``{"status", "score", "checks": {id: verdict}}``."""
    results = {}
    for folder in tracks:
        result = batch(folder, out / folder.name, jobs=jobs, sandbox=sandbox, seed=seed, force=True,
                       track=folder.name)
        for o in result.outcomes:
            card = json.loads(Path(o.scorecard).read_text(encoding="utf-8"))
            results[f"{folder.name}/{o.item.candidate}"] = {
                "status": card["status"], "score": card["score"],
                "checks": {c["id"]: c["verdict"] for c in card["checks"]}}
    return results


def differences(quiet: dict[str, dict], loaded: dict[str, dict]) -> list[str]:
    """One line per file whose status, score or any check's verdict differs (or that is missing)."""
    lines = []
    for key in sorted(set(quiet) | set(loaded)):
        a, b = quiet.get(key), loaded.get(key)
        if a is None or b is None:
            lines.append(f"{key}: graded only {'loaded' if a is None else 'quiet'}")
            continue
        if a["status"] != b["status"]:
            lines.append(f"{key}: status {a['status']} -> {b['status']}")
        for check in sorted(set(a["checks"]) | set(b["checks"])):
            va, vb = a["checks"].get(check), b["checks"].get(check)
            if va != vb:
                lines.append(f"{key}: {check} {va} -> {vb}")
        if a["score"] != b["score"] and not any(line.startswith(f"{key}:") for line in lines):
            lines.append(f"{key}: score {a['score']} -> {b['score']}")
    return lines


def compare(files: list[tuple[str, str, str, str]], work: Path, *, seeds: list[int], sandbox: str,
            say=print) -> list[str]:
    """Grade ``files`` quiet (``--jobs 1``) and loaded (``--jobs 2``, two busy cores) at each seed;
    the differences (``differences``), each line prefixed with its seed."""
    tracks = lay_out(files, work / "cohort")
    found = []
    for seed in seeds:
        start = time.perf_counter()
        quiet = grade_all(tracks, work / f"quiet-{seed}", jobs=1, seed=seed, sandbox=sandbox)
        middle = time.perf_counter()
        with busy_cores(2):
            loaded = grade_all(tracks, work / f"loaded-{seed}", jobs=2, seed=seed, sandbox=sandbox)
        end = time.perf_counter()
        diff = differences(quiet, loaded)
        say(f"seed {seed}: {len(quiet)} files, quiet --jobs 1 {middle - start:.0f} s, loaded --jobs 2 "
            f"{end - middle:.0f} s (load average {os.getloadavg()[0]:.1f}): {len(diff)} difference(s)")
        found += [f"seed {seed}: {line}" for line in diff]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exercises", nargs="+", default=None, help="default: every exercise")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--limit", type=int, default=None, help="files per exercise and track (default: all)")
    parser.add_argument("--sandbox", default="process", choices=["process", "docker", "auto"])
    parser.add_argument("--keep", type=Path, default=None, help="keep the cohort and scorecards here")
    args = parser.parse_args()
    files = corpus(args.exercises or exercise_ids(), args.limit)
    print(f"corpus: {len(files)} files ({sum(1 for f in files if f[2].startswith('sample-'))} samples, "
          f"{sum(1 for f in files if f[2].startswith('mutant-'))} mutants, "
          f"{sum(1 for f in files if f[2].startswith('confuser-'))} confusers), sandbox {args.sandbox}")
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-load-"))
    try:
        found = compare(files, work, seeds=args.seeds, sandbox=args.sandbox)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    for line in found:
        print(line)
    print("same score under load: " + ("every file" if not found else f"NOT met ({len(found)} differences)"))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
