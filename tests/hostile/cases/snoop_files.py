"""Hostile: searches the file system for the grader's reference code, exercises, expected values
and seeds, and tries to import the grader; any find is printed as LEAK. It then answers correctly.

expect: graded
needs: box
passes: all
output-has: SNOOP: done
output-lacks: LEAK
"""
import json
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
SECRET_NAMES = {"checks.py", "exercise.toml", "spec.md", "stub.py", "scorecard.schema.json", "grading.py",
                "judges.py", "tolerance.py"}
SECRET_DIRS = {"reference", "exercises", "submissions", "scorecards", "grader", "baselines"}
SKIP = ("/proc", "/sys", "/dev")
files = 0
for root, dirs, names in os.walk("/", onerror=lambda e: None):
    if root.startswith(SKIP):
        dirs[:] = []
        continue
    # the image's own Python and packages (the process backend's box: the system's and the interpreter's)
    ours = root.startswith(("/opt/venv", "/usr", sys.prefix))
    for d in dirs:
        if d in SECRET_DIRS and not ours:
            print(f"LEAK: folder {os.path.join(root, d)}")
    for name in names:
        files += 1
        path = os.path.join(root, name)
        if not ours and name in SECRET_NAMES or (name.endswith((".npz", ".npy")) and root != here and not ours):
            print(f"LEAK: file {path}")
        if ours or not name.endswith((".py", ".json", ".toml", ".txt", ".md")):
            continue
        try:
            with open(path, "rb") as fh:
                text = fh.read(1 << 20)
        except OSError:
            continue
        for marker in (b"hidden_seed", b"PUBLIC_SEED", b"def build_plan", b"golden"):
            if marker in text and path != os.path.join(here, "submission.py"):
                print(f"LEAK: {marker.decode()} in {path}")
listing = sorted(os.listdir(here))
if listing != ["arrays.npz", "instruments.py", "plan.json", "runner.py", "submission.py"]:
    print(f"LEAK: the input folder holds {listing}")
with open(os.path.join(here, "plan.json")) as fh:
    plan = json.load(fh)
words = json.dumps(plan).lower()
for word in ("seed", "expected", "golden", "reference", "tolerance"):
    if word in words:
        print(f"LEAK: plan.json mentions {word!r}")
with np.load(os.path.join(here, "arrays.npz")) as npz:
    for key in npz.files:
        if any(w in key.lower() for w in ("expected", "golden", "answer", "ref")):
            print(f"LEAK: input array {key}")
for module in ("grader", "reference", "exercises", "reference.softmax", "grader.grading.grade"):
    try:
        __import__(module)
        print(f"LEAK: import {module}")
    except ImportError:
        pass
for path in ("/work", "/root", "/home", "/srv", "/var/run/docker.sock", "/run/docker.sock"):
    try:
        # a folder above the interpreter may hold the way to it (the process box's /root/.pyenv/...), nothing else
        way = {sys.prefix[len(path):].strip("/").split("/")[0]} if sys.prefix.startswith(path + "/") else set()
        if os.path.exists(path) and (not os.path.isdir(path) or set(os.listdir(path)) - way):
            print(f"LEAK: host path {path} is visible")
    except OSError:
        pass
print(f"SNOOP: done ({files} files seen)")


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
