"""The generic runner, driven in-process, and its wire format decoded by the host's channel."""
import io
import types

import numpy as np
import pytest

from grader.run.channel import ChannelError, decode_array, decode_stream
from grader.grading.grade import run_in_process
from grader.run.plan import PlanBuilder
from grader.run.runner import encode_step_frame, write_frame


def module(**functions):
    mod = types.ModuleType("candidate")
    mod.__dict__.update(functions)
    return mod


class Counter:
    def __init__(self, start):
        self.total = start

    def add(self, x):
        self.total = self.total + float(np.sum(x))
        return self.total


def test_call_returns_arrays_tuples_and_detects_in_place_edits():
    b = PlanBuilder()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)

    def double_in_place(a):
        a *= 2
        return a, a.sum()

    b.call("c", "f", [b.array("x", x, label="x")], judge=lambda ctx: None)
    b.call("c", "f", [b.array("x", x, label="x")], judge=lambda ctx: None)
    res = run_in_process(b.plan.wire(), b.plan.arrays, module(f=double_in_place))
    first = res.steps["c.1"]
    assert first.report["ok"] and first.report["modified_inputs"] == ["x"]
    out = first.report["output"]
    assert out["kind"] == "tuple" and out["items"][0]["shape"] == [2, 3]
    np.testing.assert_array_equal(first.arrays[out["items"][0]["key"]], x * 2)
    # every step gets a fresh copy: the second call sees the original input again
    second = res.steps["c.2"]
    np.testing.assert_array_equal(second.arrays[second.report["output"]["items"][0]["key"]], x * 2)


def test_non_contiguous_argument_is_a_view_with_the_logical_values():
    b = PlanBuilder()
    x = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    seen = {}

    def probe(a):
        seen["contiguous"] = a.flags["C_CONTIGUOUS"]
        return a.copy()

    b.call("c", "f", [b.array("x", x, transpose=[2, 0, 1])], judge=lambda ctx: None)
    res = run_in_process(b.plan.wire(), b.plan.arrays, module(f=probe))
    step = res.steps["c.1"]
    assert seen["contiguous"] is False
    np.testing.assert_array_equal(step.arrays[step.report["output"]["key"]], x)


def test_stateful_steps_construct_call_method_and_read_attributes():
    b = PlanBuilder()
    b.construct("c", "Counter", "acc", [b.value(1.5)])
    b.method("c", "acc", "add", [b.array("x", np.ones(4))], judge=lambda ctx: None)
    b.getattr("c", "acc", "total", judge=lambda ctx: None)
    res = run_in_process(b.plan.wire(), b.plan.arrays, module(Counter=Counter))
    assert res.steps["c.2"].report["output"] == {"kind": "scalar", "value": 5.5, "type": "float"}
    assert res.steps["c.3"].report["output"]["value"] == 5.5


def test_exceptions_and_missing_entry_points_are_reported_not_raised():
    b = PlanBuilder()
    b.call("c", "boom", [], judge=lambda ctx: None)
    b.call("c", "absent", [], judge=lambda ctx: None)

    def boom():
        raise ZeroDivisionError("nope")

    res = run_in_process(b.plan.wire(), b.plan.arrays, module(boom=boom))
    assert res.steps["c.1"].report["exception"]["type"] == "ZeroDivisionError"
    assert res.steps["c.2"].report["exception"]["type"] == "MissingEntryPoint"
    assert "absent" in res.steps["c.2"].report["exception"]["message"]


def test_frames_round_trip_through_the_channel():
    buf = io.BytesIO()
    write_frame(buf, "import", b'{"ok": true}')
    arr = np.arange(5, dtype=np.float32)
    write_frame(buf, "step", encode_step_frame({"id": "s1", "ok": True}, {"s1/out": arr}))
    write_frame(buf, "done", b"{}")
    res = decode_stream(b"noise before" + buf.getvalue())
    assert res.done and res.import_report == {"ok": True}
    np.testing.assert_array_equal(res.steps["s1"].arrays["s1/out"], arr)


def test_cut_stream_keeps_finished_frames_and_says_why():
    buf = io.BytesIO()
    write_frame(buf, "import", b'{"ok": true}')
    write_frame(buf, "step", encode_step_frame({"id": "s1"}, {}))
    data = buf.getvalue()
    res = decode_stream(data[:-10], truncated=True)
    assert res.import_report == {"ok": True} and "s1" not in res.steps and not res.done
    assert "cut at its size cap" in res.problems[0]


def test_an_index_declaring_a_huge_shape_is_refused_before_any_allocation():
    raw = np.zeros(4).tobytes()
    with pytest.raises(ChannelError, match="exceeds"):
        decode_array(raw, {"dtype": "<f8", "shape": [10**9, 10**3]})
    with pytest.raises(ChannelError, match="not numeric"):
        decode_array(raw, {"dtype": "|O", "shape": [1]})
    with pytest.raises(ChannelError, match="declare 24"):
        decode_array(raw, {"dtype": "<f8", "shape": [3]})
    np.testing.assert_array_equal(decode_array(raw, {"dtype": "<f8", "shape": [2, 2]}), np.zeros((2, 2)))
