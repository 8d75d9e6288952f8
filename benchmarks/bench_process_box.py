"""Cost of the process backend's box (issue 20 item 5): a trivial program through ``launch.py`` in a
full box (own uid, PID/IPC/UTS/mount/network namespaces, own root, private tmpfs, the uid swept at
release) against the same launcher with rlimits only (as root, no box: what a host without
namespaces gets), each start to end of run including folder set-up and removal.

Variants alternate within each round, so machine noise hits both alike. Needs a root grader where
namespaces are allowed; prints the medians and never fails on them.

    python benchmarks/bench_process_box.py [--repeats 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from grader.sandbox import process as P
from grader.sandbox.base import Limits


def one(boxed: bool) -> float:
    """Seconds from set-up to removal of one run of ``python -c pass`` (``boxed``: in a full box)."""
    python = sys.executable
    started = time.perf_counter()
    root = tempfile.mkdtemp(prefix="bench-box-")
    box = P.allocator().acquire() if boxed else None
    P._make_run_folders(root, box, boxed)
    os.mkdir(os.path.join(root, "input"))
    cwd = os.path.join(P.BOX_DIR if boxed else root, "scratch")
    cfg = P._launch_config([python, "-I", "-S", "-c", "pass"], {"PATH": "/usr/bin:/bin"}, cwd, root, python,
                           Limits(), box, boxed)
    subprocess.run([python, "-I", "-S", str(P.LAUNCHER_PATH), json.dumps(cfg)], check=True)
    P._dispose(root, box)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    if os.geteuid() != 0 or P.ProcessSandbox().missing:
        sys.exit(f"needs a root grader with a full box here (missing: {P.ProcessSandbox().missing})")
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(args.repeats):
        for boxed in (False, True):
            times[boxed].append(one(boxed))
    plain, boxed = statistics.median(times[False]), statistics.median(times[True])
    print(f"rlimits only: median {plain * 1e3:.1f} ms; full box: median {boxed * 1e3:.1f} ms "
          f"(+{(boxed - plain) * 1e3:.1f} ms per run, {args.repeats} rounds)")


if __name__ == "__main__":
    main()
