"""The host side of the result channel on forged bytes, without a sandbox: every malformed frame is a
recorded problem (never another exception), shapes come from the arrays, output text is safe."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

from grader.run.channel import ChannelError, decode_step, decode_stream, display_text
from grader.run.runner import encode_step_frame


def _frame(kind: str, payload: bytes) -> bytes:
    return b"@@GRADER-FRAME %s %d\n" % (kind.encode(), len(payload)) + payload


def _zip(report, members=(), compression=zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        for name, data in members:
            zf.writestr(name, data)
        zf.writestr("report.json", report if isinstance(report, bytes) else json.dumps(report))
    return buf.getvalue()


def _entry(arr, member="a0.bin", **override) -> dict:
    """The index entry the runner writes for ``arr`` (dtype string, shape), with ``override``."""
    return {"member": member, "dtype": arr.dtype.str, "shape": list(arr.shape), **override}


GOOD = {"id": "s1", "ok": True, "exception": None, "modified_inputs": [],
        "output": {"kind": "array", "key": "k", "dtype": "float64", "shape": [999]}}


def test_a_runner_frame_decodes_and_shapes_come_from_the_array():
    step = decode_step(encode_step_frame(dict(GOOD), {"k": np.zeros((2, 3))}))
    assert step.report["output"]["shape"] == [2, 3] and step.report["output"]["dtype"] == "float64"


@pytest.mark.parametrize("arr", [np.arange(6.0).reshape(2, 3), np.array([True, False]), np.zeros((0, 4), np.float32),
                                 np.arange(4, dtype=">i4"), np.array([1 + 2j], np.complex64), np.zeros((1, 1, 2), np.uint8)])
def test_arrays_round_trip_without_parsing_any_header(arr, monkeypatch):
    """dtype and shape travel in the JSON index: decoding evaluates no text (``ast.literal_eval`` is
    what numpy's ``.npy`` header reader uses) and gives the array back exactly."""
    import ast

    def refuse(*_a, **_k):
        raise AssertionError("the channel evaluated sandbox text")
    monkeypatch.setattr(ast, "literal_eval", refuse)
    step = decode_step(encode_step_frame(dict(GOOD), {"k": arr}))
    got = step.arrays["k"]
    assert got.dtype == arr.dtype and got.shape == arr.shape and got.flags.writeable
    np.testing.assert_array_equal(got, arr)


@pytest.mark.parametrize("payload", [
    _zip({"report": {**GOOD, "output": {"kind": "array", "key": "missing"}}, "arrays": {}}),
    _zip({"report": {**GOOD, "exception": "boom"}, "arrays": {}}),
    _zip({"report": {**GOOD, "modified_inputs": 5, "output": None}, "arrays": {}}),
    _zip({"report": {**GOOD, "output": None, "runner_error": "forged"}, "arrays": {}}),
    _zip({"report": {**GOOD, "output": None, "measure": {"peak_bytes": float("nan")}}, "arrays": {}}),
    _zip({"report": {**GOOD, "output": {"kind": "tuple", "items": 3}}, "arrays": {}}),
    _zip(b'{"report": ' + b"[" * 100000 + b"]" * 100000 + b"}"),
    _zip({"report": GOOD, "arrays": {"k": _entry(np.zeros(1 << 16))}}, [("a0.bin", np.zeros(1 << 16).tobytes())],
         zipfile.ZIP_DEFLATED),
    _zip({"report": GOOD, "arrays": {"k": _entry(np.zeros(4), shape=[1000000, 1000000, 1000000])}},
         [("a0.bin", np.zeros(4).tobytes())]),
    _zip({"report": GOOD, "arrays": {"k": _entry(np.zeros(4), shape=[3])}}, [("a0.bin", np.zeros(4).tobytes())]),
    _zip({"report": GOOD, "arrays": {"k": _entry(np.zeros(4), shape=[-4])}}, [("a0.bin", np.zeros(4).tobytes())]),
    _zip({"report": GOOD, "arrays": {"k": _entry(np.zeros(4), shape=[True, 4])}}, [("a0.bin", np.zeros(4).tobytes())]),
    _zip({"report": GOOD, "arrays": {"k": _entry(np.zeros(4), dtype="|O")}}, [("a0.bin", np.zeros(4).tobytes())]),
    _zip({"report": GOOD, "arrays": {"k": _entry(np.zeros(4), dtype="f8,i8")}}, [("a0.bin", np.zeros(4).tobytes())]),
    _zip({"report": GOOD, "arrays": {"k": _entry(np.zeros(4), dtype="<U8")}}, [("a0.bin", np.zeros(4).tobytes())]),
    _zip({"report": GOOD, "arrays": {"k": "a0.npy"}}, [("a0.npy", np.zeros(4).tobytes())]),
    b"PK\x03\x04" + b"\x00" * 100,
], ids=["missing-array", "exception-str", "modified-int", "runner-error", "nan-measure", "tuple-items",
        "nested-json", "deflated", "absurd-shape", "short-payload", "negative-dim", "bool-dim", "object-dtype",
        "structured-dtype", "string-dtype", "old-npy-index", "broken-zip"])
def test_forged_step_frames_are_channel_errors(payload):
    with pytest.raises(ChannelError):
        decode_step(payload)
    results = decode_stream(_frame("started", b"{}") + _frame("step", payload))
    assert results.started == {} and not results.steps and results.problems


def test_a_lying_zip_size_is_a_channel_error():
    data = bytearray(_zip({"report": GOOD, "arrays": {"k": _entry(np.zeros(64))}}, [("a0.bin", np.zeros(64).tobytes())]))
    central = data.find(b"PK\x01\x02")
    data[central + 24:central + 28] = (16).to_bytes(4, "little")
    with pytest.raises(ChannelError):
        decode_step(bytes(data))


def test_a_huge_declared_frame_is_a_cut_stream_not_an_allocation():
    results = decode_stream(_frame("started", b"{}") + b"@@GRADER-FRAME step 1000000000000000\n" + b"x" * 100)
    assert results.started == {} and results.import_report is None and "cut" in results.problems[0]


def test_a_malformed_import_frame_is_a_problem():
    results = decode_stream(_frame("import", json.dumps({"ok": "yes", "exception": []}).encode()))
    assert results.import_report is None and results.problems


def test_display_text_escapes_every_control_character():
    text = display_text(b"ok\n\tline\x00\x1b[2J\r\xff" + "\u202e\u0085".encode())
    assert text == "ok\n\tline\\x00\\x1b[2J\\x0d\ufffd\\u202e\\x85"
