"""Hostile: tries to write outside the scratch folder at import (the image's site-packages, /etc,
the runner's own files, the input folder), says what happened, then answers correctly.

expect: graded
needs: box
passes: all
output-has: WRITE: tmp ok
output-lacks: ESCAPED
"""
import os
import site
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
targets = ["/evil.txt", "/etc/passwd", "/etc/evil.txt", "/home/evil.txt", "/usr/lib/evil.txt",
           os.path.join(here, "runner.py"), os.path.join(here, "instruments.py"), os.path.join(here, "submission.py"),
           os.path.join(here, "plan.json"), os.path.join(here, "evil.txt"), np.__file__,
           os.path.join(os.path.dirname(np.__file__), "evil.pth"), sys.executable, os.__file__]
targets += [os.path.join(p, "evil.pth") for p in site.getsitepackages()]
for target in targets:
    try:
        with open(target, "a") as fh:
            fh.write("owned\n")
        print(f"ESCAPED: wrote {target}")
    except OSError as exc:
        print(f"WRITE: refused {target}: {exc.strerror}")
for target in [here, "/etc/passwd", np.__file__]:
    try:
        os.chmod(target, 0o777)
        print(f"ESCAPED: chmod {target}")
    except OSError as exc:
        print(f"WRITE: refused chmod {target}: {exc.strerror}")
try:
    os.symlink("/etc/passwd", os.path.join(here, "link"))
    print("ESCAPED: symlink in the input folder")
except OSError as exc:
    print(f"WRITE: refused symlink: {exc.strerror}")
try:
    with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "scratch.txt"), "w") as fh:
        fh.write("scratch is fine\n")
    print("WRITE: tmp ok")
except OSError as exc:
    print(f"WRITE: tmp refused: {exc}")


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
