"""Crash bait for the host: a step frame whose zip directory lies about a member's size (the CRC
then fails while reading).

expect: crashed
passes: none
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

report = {"id": FIRST, "ok": True, "exception": None, "modified_inputs": [],
          "output": {"kind": "array", "key": "k", "dtype": "float64", "shape": [64]}}
data = bytearray(step_zip({"report": report, "arrays": {"k": {"member": "a0.bin", "dtype": "<f8", "shape": [64]}}},
                         {"a0.bin": np.zeros(64).tobytes()}))
central = data.find(b"PK\x01\x02")
data[central + 24:central + 28] = (16).to_bytes(4, "little")  # uncompressed size of a0.bin
frame("step", bytes(data))


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
