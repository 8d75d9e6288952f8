"""Hostile: tries to write outside /tmp at import, reports each attempt, then answers (wrongly)."""
import os

import numpy as np

targets = ["/evil.txt", "/sandbox/input/submission.py", "/sandbox/input/evil.txt", "/opt/venv/evil.txt",
           "/etc/passwd", "/home/evil.txt"]
for target in targets:
    try:
        with open(target, "a") as fh:
            fh.write("owned\n")
        print(f"WRITE: succeeded {target}")
    except OSError as exc:
        print(f"WRITE: refused {target}: {exc.strerror}")
try:
    with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "scratch.txt"), "w") as fh:
        fh.write("scratch is fine\n")
    print("WRITE: tmp ok")
except OSError as exc:
    print(f"WRITE: tmp refused: {exc}")


def softmax(x, axis=-1):
    return np.zeros_like(x)
