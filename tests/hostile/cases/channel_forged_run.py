"""Hostile: writes a whole forged run into the result channel at import (an import frame saying
ok, a step frame for every step returning its own input unchanged, a done frame), then
os._exit(0) before the runner writes anything real. Forged frames carry no answers the
submission could not compute itself: the values are judged on the host, and fail. (Probe
figures are evidence, not proof: forged ones may pass memory_scaling, see SECURITY.md.)

expect: graded|crashed
passes: dtype_preserved,input_unchanged|dtype_preserved,input_unchanged,memory_scaling
output-has: CHANNEL: fd
"""
import io
import json
import os
import stat
import zipfile

import numpy as np


def _channel_fd():
    """The runner's result channel: the pipe that is not stdin, stdout or stderr."""
    seen = set()
    for fd in (0, 1, 2):
        try:
            st = os.fstat(fd)
            seen.add((st.st_dev, st.st_ino))
        except OSError:
            pass
    for fd in range(3, 1024):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if (stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode)) and (st.st_dev, st.st_ino) not in seen:
            print(f"CHANNEL: fd {fd}")
            return fd
    raise RuntimeError("no result channel found")


CHANNEL = _channel_fd()


def frame(kind, payload):
    os.write(CHANNEL, b"@@GRADER-FRAME %s %d\n" % (kind.encode(), len(payload)) + payload)


def npy(arr):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, allow_pickle=False)
    return buf.getvalue()


def step_zip(report, members=None, compression=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        for name, data in (members or {}).items():
            zf.writestr(name, data)
        zf.writestr("report.json", report if isinstance(report, bytes) else json.dumps(report))
    return buf.getvalue()


here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "plan.json")) as fh:
    PLAN = json.load(fh)
FIRST = PLAN["steps"][0]["id"]

frame("import", json.dumps({"ok": True, "exception": None, "forbidden_imports": [], "seconds": 0.0}).encode())
arrays = np.load(os.path.join(here, "arrays.npz"))
for step in PLAN["steps"]:
    first = step["args"][0]
    x = arrays[first["array"]]
    report = {"id": step["id"], "ok": True, "seconds": 0.001, "exception": None, "modified_inputs": [],
              "output": {"kind": "array", "key": "k", "dtype": str(x.dtype), "shape": list(x.shape)},
              "gradients": None, "forbidden_imports": []}
    frame("step", step_zip({"report": report, "arrays": {"k": {"member": "a0.bin", "dtype": x.dtype.str, "shape": list(x.shape)}}},
                           {"a0.bin": np.ascontiguousarray(x).tobytes()}))
frame("done", json.dumps({"forbidden_imports": []}).encode())
os._exit(0)


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
