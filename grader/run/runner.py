"""Generic plan executor: runs the steps of a plan against a module and reports what happened.

This file is copied into the sandbox and run there as a script (``python runner.py INPUT_DIR``);
the host imports the same functions to run the reference, so "what the candidate was asked" and
"what the reference answered" come from one executor. It knows nothing about any exercise.

Only the standard library and NumPy are imported at module level; torch is imported lazily, and
only when the plan holds tensors, so NumPy exercises never pay for importing it.

Wire format (all JSON is UTF-8):

``INPUT_DIR/plan.json``
    ``{"version": 1, "entry_module": "submission", "steps": [STEP, ...],
    "forbidden_modules": [...], "step_timeout_s": float, "audit_ops"?: bool,
    "forbidden_ops"?: [pattern, ...]}``
``INPUT_DIR/arrays.npz``
    the named input arrays (no pickles).
``INPUT_DIR/submission.py``
    the module under test.

A STEP is ``{"id", "op", "target", "name"?, "args": [ARG], "kwargs": {k: ARG}, "save_as"?,
"backward"?, "timeout_s"?, "after_hang_s"?}`` with ``op`` one of ``call`` (function ``target`` of the module),
``construct`` (class ``target``; the instance is kept as ``save_as``), ``method`` (method ``name``
of the kept object ``target``) and ``getattr`` (attribute ``name`` of the kept object ``target``).
Once a step of the run has run out of time (or from the start, when the plan says ``"hung": true``:
a restart after a hang), each later step's CPU limit is the smaller of its ``timeout_s`` and its
``after_hang_s`` (default: the plan's ``after_hang_s``; none: no change), a limit the host scales from
the reference's own time for that step, so that a submission looping in every call spends little
time per call after the first (issue #20, ``grader.grading.restart``).

An ARG is ``{"array": NAME}`` (a fresh copy of an input array; ``"transpose": [axes]`` hands a
non-contiguous view instead), ``{"tensor": NAME, "dtype": "float16", "requires_grad": bool,
"device": "cpu"|"cuda", "transpose"?: [axes]}`` (a transposed tensor is a non-contiguous view of equal
values, as for arrays; never combined with ``requires_grad``),
``{"value": JSON}``, ``{"object": NAME}`` or ``{"dict": {KEY: ARG}}`` (a ``dict`` of materialized
ARGs, e.g. a parameter dict of tensors; its members' labels are reported like top-level ones).
Every ARG may carry a ``"label"`` used to report in-place modification and gradients (default: the
position, or the keyword).

``measure`` is ``{"quantities": ["flops", "peak_bytes", "seconds"], "repeat": n}``: the call runs
under ``instruments.Measurement`` (NumPy float inputs handed over as counting arrays) and the report
gains ``"measure": {...}``; with ``seconds`` and ``repeat > 1`` the call is repeated and the minimum
kept. ``backward`` is ``{"grad_output": NAME, "wrt": [label, ...]}``: after the call the runner runs
``output.backward(grad_output)`` and returns the gradients of the labelled tensors.

With ``audit_ops`` (torch plans), every call and backward pass runs under a ``TorchDispatchMode``
that records the aten ops it sees; the step report gets ``ops_seen`` (sorted ``aten.<op>`` names)
and ``forbidden_ops`` (those matching a ``forbidden_ops`` ``fnmatch`` pattern such as
``aten._scaled_dot_product_*``), so a fused kernel is seen however it was reached.

Results are a stream of frames on the result channel (the process's original stdout; the
submission's own stdout is redirected to stderr before it is imported)::

    @@GRADER-FRAME <kind> <nbytes>\\n<payload>

``kind`` is ``started`` (JSON, written when the runner is ready, just before it imports the
submission), ``import`` (JSON), ``step`` (a zip holding ``report.json``, whose index gives each array's dtype and shape, and its raw bytes as ``a<n>.bin``)
or ``done`` (JSON). Frames are written as each step ends, so steps that finished before a hang or a
crash still count.

Frame handshake (``runner.py --sync INPUT_DIR``; ``FrameSync``): the host reads the sandbox's memory
high-water mark at frame boundaries (``grader.sandbox.observe``), so around each measured step the
runner blocks until the host has acknowledged every frame written so far: before the step starts
and after its frame is written. An acknowledgement is the host's count of complete frames, 8 bytes
big-endian, then a random token, on the runner's stdin (``main`` keeps it on a private descriptor
and gives fd 0 ``/dev/null``); a measured step's report echoes the token received before the step
(``sync_token``), which only a runner that waited for the host can know. Without ``--sync``, or on end of file, an error or ``ACK_TIMEOUT_S`` without an
answer, the runner stops waiting and goes on (never a hang charged to the candidate).
"""

from __future__ import annotations

import contextlib
import fnmatch
import importlib.abc
import importlib.util
import io
import json
import math
import os
import select
import signal
import sys
import time
import traceback
import zipfile
from typing import Any, Callable

#: when this module began importing NumPy (``time.perf_counter``): the ``started`` frame's
#: ``setup_s`` counts from here (NumPy, torch when the plan has tensors, the plan's arrays, hooks)
_LOADED_AT = time.perf_counter()

import numpy as np  # noqa: E402

PLAN_VERSION = 1
FRAME_MAGIC = b"@@GRADER-FRAME"
MAX_TRACEBACK_CHARS = 4000


# A step's ``timeout_s`` is CPU time of the runner process (``ITIMER_PROF``: user + system seconds),
# so the same file gets the same verdict whatever else the machine is running; a step that waits
# without computing (``time.sleep``) is stopped by a wall-clock backstop this many times longer
# (and, past it, by the host's whole-run wall limit).
STEP_WALL_BACKSTOP_FACTOR = 8.0


class StepTimeout(BaseException):
    """Raised inside a step when it runs past its ``timeout_s`` of CPU time (``SIGPROF``), or past
    ``STEP_WALL_BACKSTOP_FACTOR`` times that on the wall clock (``SIGALRM``)."""


class ForbiddenImport(ImportError):
    """Raised when the submission imports a module the exercise forbids."""


class _ForbiddenFinder(importlib.abc.MetaPathFinder):
    """Meta-path finder that refuses forbidden top-level modules and records each attempt."""

    def __init__(self, forbidden: list[str], attempts: list[str]):
        self.forbidden = set(forbidden)
        self.attempts = attempts

    def find_spec(self, fullname, path=None, target=None):  # noqa: D102 - importlib protocol
        if fullname.split(".")[0] in self.forbidden:
            self.attempts.append(fullname)
            raise ForbiddenImport(f"import of '{fullname}' is not allowed in this exercise")
        return None


def _torch():
    import torch  # noqa: PLC0415 - lazy on purpose: NumPy exercises never import torch

    return torch


MAX_OPS_REPORTED = 256


def _op_audit(forbidden: list[str]):
    """A ``TorchDispatchMode`` recording every aten op run under it (``.seen``, ``.forbidden``)."""
    from torch.utils._python_dispatch import TorchDispatchMode  # noqa: PLC0415 - torch is lazy

    class OpAudit(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            # Keeps torch from importing torch._dynamo (~2.4 s) on the first dispatch; we never compile.
            return False

        def __init__(self):
            super().__init__()
            self.seen: set[str] = set()
            self.forbidden: set[str] = set()
            self._known: set = set()  # the op overloads already recorded (one name lookup each)

        def record(self, func) -> None:
            """Record one aten op; the measuring mode calls this itself where it runs (one dispatch
            layer instead of two on a measured step)."""
            if func in self._known:
                return
            self._known.add(func)
            name = str(getattr(func, "overloadpacket", func))
            if name not in self.seen:
                self.seen.add(name)
                if any(fnmatch.fnmatchcase(name, pattern) for pattern in forbidden):
                    self.forbidden.add(name)

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.record(func)
            return func(*args, **(kwargs or {}))

    return OpAudit()


def _trim_traceback(exc: BaseException, keep_file: str | None) -> str:
    """Format ``exc``'s traceback keeping only frames from ``keep_file`` (the submission)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if keep_file is not None:
        kept = [f for f in frames if os.path.abspath(f.filename) == os.path.abspath(keep_file)]
        frames = traceback.StackSummary.from_list(kept) if kept else frames[-1:]
    text = "".join(traceback.format_list(frames))
    text += "".join(traceback.format_exception_only(type(exc), exc))
    if len(text) > MAX_TRACEBACK_CHARS:
        text = "...\n" + text[-MAX_TRACEBACK_CHARS:]
    return text


def describe_exception(exc: BaseException, keep_file: str | None) -> dict:
    """JSON-able record of an exception: ``type``, ``message`` and a trimmed ``traceback``."""
    try:
        message = str(exc)
    except BaseException:  # a hostile __str__  # noqa: BLE001
        message = "<unprintable exception message>"
    return {
        "type": type(exc).__name__,
        "message": message[:2000],
        "traceback": _trim_traceback(exc, keep_file),
    }


class PlanExecutor:
    """Runs the steps of one plan against one module.

    Args:
        plan: the decoded ``plan.json`` (see the module docstring).
        arrays: input arrays by name; they are never handed out directly, every step gets copies.
        module: the module under test (the submission, or a reference module on the host).
        module_file: path of the module's source, used to trim tracebacks to the candidate's file.
        use_alarm: enforce ``timeout_s`` per step: CPU seconds with ``SIGPROF`` and a wall-clock
            backstop of ``STEP_WALL_BACKSTOP_FACTOR`` times that with ``SIGALRM`` (only in the main
            thread). CPU time, not wall time, so that a loaded machine does not turn a passing step
            into a timeout.
    """

    def __init__(self, plan: dict, arrays: dict[str, np.ndarray], module: Any,
                 module_file: str | None = None, use_alarm: bool = False):
        self.plan = plan
        self.arrays = arrays
        self.module = module
        self.module_file = module_file
        self.use_alarm = use_alarm
        self.objects: dict[str, Any] = {}
        #: a step of this run (or, with the plan's ``"hung": true``, of an earlier run of the same
        #: grading) ran out of time: later steps get their ``after_hang_s`` limit (issue #20)
        self.hung = bool(plan.get("hung"))

    # -- arguments -------------------------------------------------------------------------------
    def _materialize(self, arg: dict) -> Any:
        if "array" in arg:
            value = np.array(self.arrays[arg["array"]], copy=True)
            if "transpose" in arg:
                # stored contiguous in the transposed layout; hand out a non-contiguous view
                value = np.ascontiguousarray(np.transpose(value, np.argsort(arg["transpose"])))
                value = np.transpose(value, arg["transpose"])
            return value
        if "tensor" in arg:
            torch = _torch()
            dtype = getattr(torch, arg.get("dtype") or "float32")
            source = self.arrays[arg["tensor"]]
            value = torch.tensor(np.array(source, copy=True)).to(dtype)
            if arg.get("device", "cpu") != "cpu":
                value = value.to(arg["device"])
            if "transpose" in arg:  # same values, non-contiguous: a permuted view of a contiguous copy
                perm = [int(a) for a in arg["transpose"]]
                value = value.permute(*np.argsort(perm).tolist()).contiguous().permute(*perm)
            if arg.get("requires_grad"):
                value.requires_grad_(True)
            return value
        if "value" in arg:
            return arg["value"]
        if "object" in arg:
            return self.objects[arg["object"]]
        if "dict" in arg:
            return {str(k): self._materialize(v) for k, v in arg["dict"].items()}
        raise ValueError(f"unknown argument form: {sorted(arg)}")

    @staticmethod
    def _same(before: Any, after: Any) -> bool:
        if isinstance(after, np.ndarray):
            return before.shape == after.shape and bool(np.array_equal(before, after, equal_nan=True))
        if type(after).__module__.startswith("torch"):
            torch = _torch()
            return bool(torch.equal(before.detach(), after.detach())) or bool(
                torch.isnan(before).any() and torch.allclose(before.detach(), after.detach(), equal_nan=True))
        return True

    @staticmethod
    def _snapshot(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            return value.copy()
        if type(value).__module__.startswith("torch"):
            return value.detach().clone()
        return None

    # -- outputs ---------------------------------------------------------------------------------
    def _describe(self, value: Any, key: str, out: dict[str, np.ndarray], depth: int = 0) -> dict:
        """Turn a return value into a JSON descriptor, storing arrays in ``out`` under ``key``."""
        if depth > 4:
            return {"kind": "other", "type": type(value).__name__, "note": "nested too deeply"}
        if value is None:
            return {"kind": "none"}
        if isinstance(value, np.ndarray):
            arr = np.array(value, copy=True, subok=False)
            if arr.dtype.kind not in "biufc":  # object, structured, strings, dates: not a numeric result
                return {"kind": "other", "type": f"ndarray[{arr.dtype.kind}]"}
            out[key] = np.ascontiguousarray(arr)
            return {"kind": "array", "key": key, "dtype": str(arr.dtype), "shape": list(arr.shape),
                    "subclass": type(value).__name__ if type(value) is not np.ndarray else None}
        if type(value).__module__.startswith("torch") and type(value).__name__ in ("Tensor", "Parameter"):
            torch = _torch()
            tensor = value.detach().cpu()
            torch_dtype = str(tensor.dtype).replace("torch.", "")
            if tensor.dtype == torch.bfloat16:
                tensor = tensor.to(torch.float32)
            arr = tensor.numpy()
            out[key] = np.ascontiguousarray(arr)
            return {"kind": "array", "key": key, "dtype": str(arr.dtype), "shape": list(arr.shape),
                    "torch_dtype": torch_dtype, "device": str(value.device),
                    "requires_grad": bool(value.requires_grad)}
        if isinstance(value, (bool, int, float, str)) and type(value) in (bool, int, float, str):
            if isinstance(value, float) and not math.isfinite(value):
                return {"kind": "scalar", "value": repr(value), "type": "float"}
            if type(value) is int and abs(value) >= 2**63:  # json.dumps refuses ints past 4300 digits
                return {"kind": "scalar", "value": f"<an int of {value.bit_length()} bits>", "type": "int"}
            return {"kind": "scalar", "value": value if not isinstance(value, str) else value[:200],
                    "type": type(value).__name__}
        if isinstance(value, np.generic):
            return self._describe(np.asarray(value), key, out, depth + 1)
        if type(value) in (tuple, list):
            if len(value) > 16:
                return {"kind": "other", "type": type(value).__name__, "note": f"{len(value)} items"}
            return {"kind": "tuple", "type": type(value).__name__,
                    "items": [self._describe(v, f"{key}.{i}", out, depth + 1) for i, v in enumerate(value)]}
        return {"kind": "other", "type": type(value).__name__}

    # -- one step --------------------------------------------------------------------------------
    def _resolve(self, step: dict) -> Callable[..., Any]:
        op, target = step["op"], step["target"]
        if op in ("call", "construct"):
            if not hasattr(self.module, target):
                raise _MissingEntryPoint(f"the submission defines no {'class' if op == 'construct' else 'function'} '{target}'")
            return getattr(self.module, target)
        obj = self.objects.get(target)
        if obj is None:
            raise _MissingEntryPoint(f"object '{target}' was not created (an earlier step failed)")
        if op == "method":
            if not hasattr(obj, step["name"]):
                raise _MissingEntryPoint(f"'{type(obj).__name__}' has no method '{step['name']}'")
            return getattr(obj, step["name"])
        if op == "getattr":
            name = step["name"]
            return lambda: getattr(obj, name)
        raise ValueError(f"unknown step op: {op}")

    def run_step(self, step: dict) -> tuple[dict, dict[str, np.ndarray]]:
        """Run one step; return its report and the arrays it produced (keyed ``<step id>/...``)."""
        report: dict[str, Any] = {"id": step["id"], "ok": False, "seconds": None, "exception": None,
                                  "modified_inputs": [], "output": None, "gradients": None}
        out: dict[str, np.ndarray] = {}
        timeout = step.get("timeout_s", self.plan.get("step_timeout_s"))
        after_hang = step.get("after_hang_s", self.plan.get("after_hang_s"))
        shortened = bool(self.hung and timeout and after_hang and float(after_hang) < float(timeout))
        if shortened:
            timeout = float(after_hang)
        armed = False
        audit = _op_audit(self.plan.get("forbidden_ops", [])) if self.plan.get("audit_ops") else None
        measure = step.get("measure")
        try:
            inst = _instruments() if measure else None
        except BaseException as exc:  # noqa: BLE001 - the grader's own fault, reported as such
            report["runner_error"] = f"instruments unavailable: {type(exc).__name__}: {exc}"
            return report, out
        try:
            func = self._resolve(step)
            labels, values = [], []
            for i, arg in enumerate(step.get("args", [])):
                labels.append(arg.get("label", str(i)))
                values.append((arg, self._materialize(arg)))
            kw = {k: (a, self._materialize(a)) for k, a in step.get("kwargs", {}).items()}
            live = {}
            for lab, (a, v) in [*zip(labels, values), *((a.get("label", k), (a, v)) for k, (a, v) in kw.items())]:
                if "dict" in a:  # each member of a dict argument is watched and differentiated on its own
                    live.update({sub.get("label", f"{lab}.{key}"): v[key] for key, sub in a["dict"].items()})
                else:
                    live[lab] = v
            snapshots = {lab: self._snapshot(v) for lab, v in live.items()}
            if measure and {"flops", "kv_flops", "largest_numel"} & set(measure.get("quantities", [])):
                values = [(a, inst.instrument_numpy(v)) for a, v in values]
                kw = {k: (a, inst.instrument_numpy(v)) for k, (a, v) in kw.items()}
            if measure and measure.get("track"):  # provenance: work done with these labels' data
                for a, v in [*values, *kw.values()]:
                    if a.get("label") in measure["track"]:
                        inst.track(v)
            call_args = [v for _, v in values]
            call_kwargs = {k: v for k, (_, v) in kw.items()}
            if self.use_alarm and timeout:
                signal.setitimer(signal.ITIMER_PROF, float(timeout))
                signal.setitimer(signal.ITIMER_REAL, float(timeout) * STEP_WALL_BACKSTOP_FACTOR)
                armed = True
            start = time.perf_counter()
            meter = (inst.Measurement(measure.get("quantities", []), uses_torch=_is_torch_step(step),
                                      device=_step_device(step), on_op=audit.record if audit is not None else None)
                     if measure else contextlib.nullcontext())
            # a meter that dispatches torch ops itself records them for the audit (one Python dispatch
            # layer per op, not two: the layers cost ~10 us an op, most of a probe's run)
            audited = bool(measure) and audit is not None and meter.counts_torch_ops
            with audit if audit is not None and not audited else contextlib.nullcontext():
                with meter:
                    result = func(*call_args, **call_kwargs)
            gradients = None
            if step.get("backward"):
                with audit if audit is not None else contextlib.nullcontext():
                    gradients = self._backward(step["backward"], result, live, out, step["id"])
            report["seconds"] = time.perf_counter() - start
            if measure:
                report["measure"] = dict(meter.report)
                if "seconds" in measure.get("quantities", []) and int(measure.get("repeat", 1)) > 1:
                    sync = _torch().cuda.synchronize if _step_device(step) == "cuda" else None
                    extra = inst.min_seconds(lambda: func(*call_args, **call_kwargs),
                                             int(measure["repeat"]) - 1, sync=sync)
                    report["measure"]["seconds"] = min(report["measure"]["seconds"], extra)
            if armed:
                _disarm_step_timers()
                armed = False
            if step["op"] == "construct":
                self.objects[step.get("save_as") or step["id"]] = result
                report["output"] = {"kind": "object", "type": type(result).__name__}
            else:
                report["output"] = self._describe(result, f"{step['id']}/out", out)
            report["gradients"] = gradients
            report["modified_inputs"] = [lab for lab, snap in snapshots.items()
                                         if snap is not None and not self._same(snap, live[lab])]
            report["ok"] = True
        except _MissingEntryPoint as exc:
            report["exception"] = {"type": "MissingEntryPoint", "message": str(exc), "traceback": ""}
        except StepTimeout:
            why = " (the shorter limit of steps after one that hung)" if shortened else ""
            report["exception"] = {"type": "StepTimeout",
                                   "message": f"step ran longer than {timeout:g} s of CPU time{why}",
                                   "traceback": ""}
            self.hung = True
        except BaseException as exc:  # noqa: BLE001 - the candidate's exception is data, not a crash
            if isinstance(exc, KeyboardInterrupt) and not self.use_alarm:
                raise
            report["exception"] = describe_exception(exc, self.module_file)
        finally:
            if armed:
                _disarm_step_timers()
            if audit is not None:
                report["ops_seen"] = sorted(audit.seen)[:MAX_OPS_REPORTED]
                report["forbidden_ops"] = sorted(audit.forbidden)
        return report, out

    def _backward(self, spec: dict, result: Any, live: dict, out: dict, step_id: str) -> dict:
        torch = _torch()
        output = result[0] if isinstance(result, (tuple, list)) else result
        if not isinstance(output, torch.Tensor):
            raise TypeError(f"expected a torch.Tensor to differentiate, got {type(output).__name__}")
        if not output.requires_grad:
            return {label: {"kind": "none", "note": "output is not connected to the autograd graph"}
                    for label in spec["wrt"]}
        grad_output = torch.tensor(np.array(self.arrays[spec["grad_output"]])).to(output.dtype).to(output.device)
        if tuple(grad_output.shape) != tuple(output.shape):
            raise ValueError(f"output has shape {tuple(output.shape)}, expected {tuple(grad_output.shape)}")
        output.backward(grad_output)
        grads = {}
        for label in spec["wrt"]:
            tensor = live.get(label)
            grad = getattr(tensor, "grad", None)
            grads[label] = (self._describe(grad, f"{step_id}/grad/{label}", out) if grad is not None
                            else {"kind": "none", "note": "no gradient reached this input"})
        return grads

    def run(self, emit: Callable[[dict, dict[str, np.ndarray]], None],
            before: Callable[[dict], None] | None = None) -> None:
        """Run every step in order, calling ``before(step)`` (if given) before each and
        ``emit(report, arrays)`` after each."""
        for step in self.plan["steps"]:
            if before is not None:
                before(step)
            report, out = self.run_step(step)
            emit(report, out)


class _MissingEntryPoint(Exception):
    pass


_INSTRUMENTS: list = []


def _instruments():
    """The measuring instruments: the sibling file inside the sandbox, the package on the host.

    Imported once and kept: ``main`` imports them before the submission, so nothing the submission
    does to ``sys.modules`` or the file system can make them fail later (a grader fault).
    """
    if not _INSTRUMENTS:
        if __package__:
            from grader.run import instruments  # noqa: PLC0415
        else:
            import instruments  # noqa: PLC0415 - copied beside this file into the sandbox
        _INSTRUMENTS.append(instruments)
    return _INSTRUMENTS[0]


def step_args(step: dict) -> list[dict]:
    """Every ARG of a wire step, positional and keyword, with ``dict`` arguments replaced by their
    members (the same dict objects, so callers may edit them in place)."""
    flat = []
    for arg in [*step.get("args", []), *step.get("kwargs", {}).values()]:
        flat.extend(arg["dict"].values() if isinstance(arg.get("dict"), dict) else [arg])
    return flat


def _step_device(step: dict) -> str:
    """``cuda`` when any tensor argument of the step is placed on a GPU, else ``cpu``."""
    devices = {a.get("device", "cpu") for a in step_args(step) if "tensor" in a}
    return "cuda" if any(d.startswith("cuda") for d in devices) else "cpu"


def _is_torch_step(step: dict) -> bool:
    """Whether the step is measured as torch code: a tensor argument, or a ``measure`` request that
    says so (``"torch": true``, for a torch track's call whose arguments are plain ints, e.g.
    ``create_causal_mask(8, 512)``: tracemalloc does not see torch's buffers)."""
    return any("tensor" in a for a in step_args(step)) or bool((step.get("measure") or {}).get("torch"))


# -- sandbox side ----------------------------------------------------------------------------------

def encode_step_frame(report: dict, arrays: dict[str, np.ndarray]) -> bytes:
    """Pack one step's report and arrays as a zip of stored members: ``report.json`` (the report, and
    an index ``{key: {"member", "dtype", "shape"}}`` with each array's dtype string and shape) and one
    ``a<n>.bin`` of raw C-order bytes per array. No pickles, and no ``.npy`` header for the host to
    parse (``grader.run.channel.decode_array`` rebuilds each array with ``np.frombuffer``)."""
    buf = io.BytesIO()
    index = {}
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        for n, (key, arr) in enumerate(arrays.items()):
            arr = np.ascontiguousarray(arr)
            member = f"a{n}.bin"
            index[key] = {"member": member, "dtype": arr.dtype.str, "shape": list(arr.shape)}
            with zf.open(member, "w", force_zip64=True) as fh:
                fh.write(arr.tobytes(order="C"))
        zf.writestr("report.json", json.dumps({"report": report, "arrays": index}))
    return buf.getvalue()


#: What one step's report keeps of the output printed during it (bytes); the rest is counted.
PRINTED_STEP_CAP = 4096
#: What all step reports of a run keep together (bytes).
PRINTED_TOTAL_CAP = 64 * 1024
#: The submission's output forwarded to the host as it is printed: the first this many bytes (the
#: import-time part first)...
FORWARD_HEAD_BYTES = 40 * 1024
#: ...then only the last this many are kept, and forwarded at the end after a line saying how many
#: bytes were left out (``ELIDED_LINE``): a flood of output is cut here, in the sandbox, instead of
#: streaming megabytes to a host that would stop the run for it.
FORWARD_TAIL_BYTES = 16 * 1024
#: The run's folder as output names it, whatever the backend (docker mounts the inputs at /sandbox/input).
SANDBOX_ROOT = "/sandbox"
#: The line between head and tail of cut output (the host reads it as ``truncated``).
ELIDED_LINE = "\n[grader: {n} bytes of output not kept]\n"
#: Bytes one read of the capture's pipe takes, into a buffer allocated once (``os.readv``): ``os.read``
#: would allocate this much for every read, which ``tracemalloc`` counts.
READ_BYTES = 1 << 16
#: Bytes the reader holds, unprocessed, while a measured step runs (``OutputCapture.quiet``).
QUIET_HOLD_BYTES = 1 << 20


class OutputCapture:
    """Tags the submission's printed output by plan step (issue #13: hidden steps' output must never
    reach the candidate view).

    fd 1 and fd 2 are pointed at a pipe that a reader thread drains. Every byte is forwarded to the
    process's original stderr (the host's captured-output stream, unchanged, capped by the host) and
    also kept, capped, for the segment that is open: the import, then each step. ``cut()`` closes a
    segment: it flushes Python's streams and writes a marker that holds a fresh random token into the
    pipe, and waits until the reader has seen it, so every byte written before the cut belongs to
    the segment it closes. A submission cannot forge a cut: it never sees a token before it is
    written, and each is used once.

    While a measured step runs (``quiet(True)``) the reader copies what it reads into a buffer
    allocated once and processes it after the step: ``tracemalloc`` is process-wide, so a reader that
    allocated per read (``os.read`` takes 64 KiB before it shrinks) would add its own bytes to the
    step's peak whenever the scheduler ran it inside the window, and a NumPy memory probe of a file
    that prints would depend on the machine's load (a correct softmax that printed in every call
    failed ``memory_scaling`` once under a loaded CI).

    Args:
        original_stderr: a duplicate of the process's stderr, where everything is forwarded.
    """

    def __init__(self, original_stderr: int, root: str = SANDBOX_ROOT):
        import threading  # noqa: PLC0415 - sandbox side only

        self._out = original_stderr
        # The run's folder as the submission sees it (the process backend's is a host temp folder):
        # shown as the docker sandbox's ``/sandbox``, so output never names a path of the host.
        self._root = os.fsencode(root.rstrip("/")) if len(root.rstrip("/")) > 1 and root != SANDBOX_ROOT else b""
        self._read, write = os.pipe()
        self._write = os.dup(write)  # ours, for markers, whatever the submission does to fd 1 and 2
        os.dup2(write, 1)
        os.dup2(write, 2)
        os.close(write)
        self._lock = threading.Lock()
        self._marker: bytes | None = None
        self._seen = threading.Event()
        self._pending = b""
        self._kept = bytearray()
        self._count = 0
        self._total_kept = 0
        self._segment: tuple[bytes, int] | None = None
        self._forwarded = 0
        self._dropped = 0
        self._tail = b""
        self._buf = bytearray(READ_BYTES)
        self._bufs = [self._buf]
        self._view = memoryview(self._buf)
        self._hold = bytearray(QUIET_HOLD_BYTES)
        self._held = 0
        self._quiet = False
        self._reader = threading.Thread(target=self._drain, name="grader-output", daemon=True)
        self._reader.start()

    def _forward(self, data: bytes) -> None:
        """Forward the head of the output (``FORWARD_HEAD_BYTES``); past it keep only a tail."""
        room = FORWARD_HEAD_BYTES - self._forwarded
        if room > 0:
            head, data = data[:room], data[room:]
            self._forwarded += len(head)
            try:
                os.write(self._out, head)
            except OSError:
                pass
        if data:
            self._dropped += len(data)
            self._tail = (self._tail + data)[-FORWARD_TAIL_BYTES:]

    def finish(self) -> None:
        """At the end of the run: forward the kept tail of cut output after ``ELIDED_LINE``, the tail
        starting at a line (or failing that a word) so it never opens mid-word."""
        self.cut()
        with self._lock:
            if not self._dropped:
                return
            tail = self._tail
            cut = tail.find(b"\n")
            if cut < 0 or cut > 1024:
                cut = next((i for i, b in enumerate(tail[:1024]) if b in b" \t\r"), -1)
            if 0 <= cut < len(tail) - 1 and self._dropped > len(tail):  # its first byte was cut: start clean
                tail = tail[cut + 1:]
            self._tail = b""
            try:
                os.write(self._out, ELIDED_LINE.format(n=self._dropped - len(tail)).encode("ascii") + tail)
            except OSError:
                pass

    def _take(self, data: bytes) -> None:
        if data and self._root:
            data = data.replace(self._root, SANDBOX_ROOT.encode())
        if data:
            self._forward(data)
            room = min(PRINTED_STEP_CAP - len(self._kept), PRINTED_TOTAL_CAP - self._total_kept)
            if room > 0:
                self._kept += data[:room]
                self._total_kept += min(room, len(data))
            self._count += len(data)

    def quiet(self, on: bool) -> None:
        """Hold what is printed from now on without processing it (``on``), or process it again at
        the next read (the next cut's marker is one). Held bytes keep their order; past
        ``QUIET_HOLD_BYTES`` the reader processes as usual."""
        self._quiet = bool(on)

    def _drain(self) -> None:
        while True:
            try:
                n = os.readv(self._read, self._bufs)
            except OSError:
                return
            if not n:
                if self._held:
                    with self._lock:
                        self._take(bytes(self._hold[:self._held]))
                        self._held = 0
                return
            if self._quiet and self._held + n <= QUIET_HOLD_BYTES:
                self._hold[self._held:self._held + n] = self._view[:n]
                self._held += n
                continue
            chunk = bytes(self._view[:n])
            if self._held:
                chunk = bytes(self._hold[:self._held]) + chunk
                self._held = 0
            with self._lock:
                data = self._pending + chunk
                marker = self._marker
                if marker is not None and marker in data:
                    before, _, after = data.partition(marker)
                    self._take(before)
                    self._segment = (bytes(self._kept), self._count)
                    self._kept, self._count = bytearray(), 0
                    self._marker = None
                    self._pending = b""
                    self._take(after)
                    self._seen.set()
                    continue
                # keep a tail that may be the start of a marker split across two reads
                keep = len(marker) - 1 if marker is not None else 0
                cut = max(0, len(data) - keep)
                self._take(data[:cut])
                self._pending = data[cut:]

    def cut(self, timeout: float = 5.0) -> dict:
        """Close the open segment; returns ``{"text", "bytes"}``: what was printed in it (text decoded
        as UTF-8 with replacement, at most ``PRINTED_STEP_CAP`` bytes of it) and how many bytes."""
        import secrets  # noqa: PLC0415

        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001 - a stream the submission broke
                pass
        marker = b"\x00@@GRADER-CUT " + secrets.token_hex(16).encode() + b"\x00"
        with self._lock:
            self._seen.clear()
            self._marker = marker
        try:
            os.write(self._write, marker)
        except OSError:
            pass
        # The reader is gone when the submission closed the pipe's read end (its descriptor): no
        # marker can arrive, so the segment closes at once instead of after ``timeout`` at every step.
        if not self._reader.is_alive() or not self._seen.wait(timeout):  # wedged or closed: close it anyway
            with self._lock:
                self._marker = None
                self._segment = (bytes(self._kept), self._count)
                self._kept, self._count = bytearray(), 0
        with self._lock:
            kept, count = self._segment or (b"", 0)
            self._segment = None
        return {"text": kept.decode("utf-8", errors="replace"), "bytes": int(count)}


def write_frame(channel, kind: str, payload: bytes) -> None:
    """Write one frame to the binary result channel and flush it."""
    channel.write(FRAME_MAGIC + f" {kind} {len(payload)}\n".encode("ascii") + payload)
    channel.flush()


#: Command-line flag asking for the frame handshake (the sandboxes pass it; see the module docstring).
SYNC_FLAG = "--sync"
#: Bytes of the frame count that starts an acknowledgement (unsigned big-endian).
COUNT_BYTES = 8
#: Bytes of one acknowledgement: the host's count of complete frames, then a random token of
#: ``ACK_BYTES - COUNT_BYTES`` bytes that the runner echoes in the next measured step's report
#: (``sync_token``, hex), so the host can tell a runner that waited for it from one that did not.
ACK_BYTES = 16
#: Seconds the runner waits for one acknowledgement before it stops waiting for the rest of the run.
ACK_TIMEOUT_S = 10.0


class FrameSync:
    """The runner's side of the frame handshake: counts the frames it writes and waits, when asked,
    until the host has acknowledged all of them.

    Args:
        channel: the binary result channel.
        fd: the descriptor acknowledgements arrive on (None: no handshake, ``wait`` returns at once).
    """

    def __init__(self, channel, fd: int | None):
        self.channel, self.fd = channel, fd
        if fd is not None:
            # non-blocking: bytes that select saw may be gone by the read (a submission's thread
            # reading the same descriptor), and a blocking read would then never return
            try:
                os.set_blocking(fd, False)
            except OSError:
                self.fd = None
        self.written = 0
        self.acked = 0
        #: hex of the token of the latest acknowledgement (of ``acked`` frames); None before any
        self.token: str | None = None
        self._pending = b""

    def write(self, kind: str, payload: bytes) -> None:
        """Write one frame (``write_frame``) and count it."""
        write_frame(self.channel, kind, payload)
        self.written += 1

    def wait(self) -> None:
        """Block until the host acknowledged every frame written so far. On end of file, a read
        error, a malformed acknowledgement or ``ACK_TIMEOUT_S`` without one, stop waiting for good."""
        deadline = time.monotonic() + ACK_TIMEOUT_S
        while self.fd is not None and self.acked < self.written:
            left = deadline - time.monotonic()
            try:
                ready = select.select([self.fd], [], [], max(left, 0.0))[0] if left > 0 else []
                data = os.read(self.fd, 4096) if ready else b""
            except BlockingIOError:
                continue
            except (OSError, ValueError):
                data = b""
            if not data:
                self.fd = None  # the host is gone, never answers, or the descriptor broke: go on alone
                return
            self._pending += data
            while len(self._pending) >= ACK_BYTES:
                count = int.from_bytes(self._pending[:COUNT_BYTES], "big")
                token = self._pending[COUNT_BYTES:ACK_BYTES].hex()
                self._pending = self._pending[ACK_BYTES:]
                if count > self.written:
                    self.fd = None  # an acknowledgement of frames never written: not the host's
                    return
                if count >= self.acked:
                    self.acked, self.token = count, token


def load_submission(path: str, module_name: str = "submission"):
    """Import the file at ``path`` as a module named ``module_name``."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def _on_alarm(signum, frame):
    raise StepTimeout()


def _disarm_step_timers() -> None:
    """Stop both per-step timers (CPU ``ITIMER_PROF`` and wall-clock ``ITIMER_REAL``)."""
    signal.setitimer(signal.ITIMER_PROF, 0)
    signal.setitimer(signal.ITIMER_REAL, 0)


def main(argv: list[str] | None = None) -> int:
    """Sandbox entry point: ``python runner.py [--sync] INPUT_DIR``. Returns the process exit code."""
    argv = sys.argv[1:] if argv is None else argv
    sync_frames = argv[:1] == [SYNC_FLAG]
    input_dir = argv[1] if sync_frames else argv[0]
    # The result channel is our original stdout; from here on fd 1 goes where stderr goes, so
    # nothing the submission prints can be mistaken for a frame.
    channel = os.fdopen(os.dup(1), "wb", buffering=0)
    # Acknowledgements of the frame handshake arrive on stdin: kept on a private descriptor (made
    # after the channel's), and the submission's stdin reads end of file as before.
    ack_fd = None
    if sync_frames:
        try:
            ack_fd = os.dup(0)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
        except OSError:  # no stdin at all: no handshake
            pass
    sync = FrameSync(channel, ack_fd)
    sys.stdout.flush()
    sys.stderr.flush()
    # fd 1 and fd 2 now go through a pipe that tags what is printed by step (OutputCapture); all of
    # it still reaches the original stderr, which the host captures.
    capture = OutputCapture(os.dup(2), root=os.path.dirname(os.path.abspath(input_dir)))
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", buffering=0), write_through=True,
                                  encoding="utf-8", errors="replace")

    with open(os.path.join(input_dir, "plan.json"), encoding="utf-8") as fh:
        plan = json.load(fh)
    with np.load(os.path.join(input_dir, "arrays.npz"), allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    if any("tensor" in a for s in plan["steps"] for a in step_args(s)):
        torch = _torch()
        torch.set_num_threads(1)
    if any("measure" in s for s in plan["steps"]):
        _instruments().install_numpy_hooks()  # before the import: ``from numpy import asarray`` too
    submission_path = os.path.join(input_dir, "submission.py")
    # Everything of the runner is ready: from here on, a process that ends without an ``import``
    # frame was ended by the submission, not by the grader.
    sync.write("started", json.dumps({"pid": os.getpid(),
                                      "setup_s": round(time.perf_counter() - _LOADED_AT, 4)}).encode())

    attempts: list[str] = []
    sys.meta_path.insert(0, _ForbiddenFinder(plan.get("forbidden_modules", []), attempts))
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.signal(signal.SIGPROF, _on_alarm)
    import_report: dict[str, Any] = {"ok": False, "exception": None, "forbidden_imports": attempts}
    start = time.perf_counter()
    try:
        module = load_submission(submission_path)
        import_report["ok"] = True
    except BaseException as exc:  # noqa: BLE001 - SyntaxError, SystemExit, anything at import
        module = None
        import_report["exception"] = describe_exception(exc, submission_path)
    import_report["seconds"] = time.perf_counter() - start
    import_report["printed"] = capture.cut()
    sync.write("import", json.dumps(import_report).encode())
    if module is None:
        capture.finish()
        sync.write("done", json.dumps({"forbidden_imports": attempts}).encode())
        return 0

    executor = PlanExecutor(plan, arrays, module, module_file=submission_path, use_alarm=True)
    measured = {s["id"] for s in plan["steps"] if s.get("measure")}

    def before(step):
        if step["id"] in measured:  # the host has marked the memory at the frame before this step
            sync.wait()
            capture.quiet(True)  # the reader allocates nothing while the step is measured

    def emit(report, out):
        report["forbidden_imports"] = list(attempts)
        capture.quiet(False)
        report["printed"] = capture.cut()
        if report.get("id") in measured:  # proof that the step began after the host's mark
            report["sync_token"] = sync.token
        sync.write("step", encode_step_frame(report, out))
        if report.get("id") in measured:  # ...and at its own frame, before anything else runs
            sync.wait()

    executor.run(emit, before)
    capture.finish()
    sync.write("done", json.dumps({"forbidden_imports": attempts}).encode())
    return 0


#: What a waiting runner writes on its stdout once its runtime is imported (``wait_for_job``).
READY_LINE = b"@@GRADER-READY\n"


def wait_for_job(runtime: str, argv: list[str]) -> int:
    """Warm-pool entry point: ``python runner.py --wait numpy|torch INPUT_DIR``.

    Imports the runtime ahead of the job (NumPy is imported at module level; ``torch`` also imports
    torch and sets one thread, as ``main`` does for tensor plans, and the module autograd imports on
    its first ``backward`` with a gradient), writes ``READY_LINE`` on stdout (the host reads it
    before the result channel starts), then blocks reading a line from
    stdin. The host writes the job's files into INPUT_DIR before it sends that line; on end of file
    instead (the pool drained it) the runner exits without running anything. Once the job is here,
    ``main`` runs exactly as it would cold (``argv`` may start with ``--sync``: the handshake's
    acknowledgements then follow the line on stdin, which is read unbuffered so none is taken early).
    """
    if runtime == "torch":
        _torch().set_num_threads(1)
        # autograd's ``backward(grad_output)`` imports this lazily (with sympy, ~2 s): the first
        # backward step of a cold run pays it; a waiting runner pays it before its job.
        import torch.fx.experimental.symbolic_shapes  # noqa: F401, PLC0415
    elif runtime != "numpy":
        raise SystemExit(f"unknown runtime {runtime!r}")
    os.write(1, READY_LINE)  # read by the host before anything else on the result channel
    line = b""
    while not line.endswith(b"\n") and len(line) < 64:
        try:
            byte = os.read(0, 1)
        except OSError:
            byte = b""
        if not byte:
            break
        line += byte
    if line.strip() != b"go":
        return 0
    return main(argv)


if __name__ == "__main__":
    # The runner's own folder first on sys.path, never the submission's: a submission file cannot
    # shadow numpy or this module by its name.
    sys.path[:] = [os.path.dirname(os.path.abspath(__file__))] + [p for p in sys.path if p not in ("", os.getcwd())]
    code = wait_for_job(sys.argv[2], sys.argv[3:]) if sys.argv[1:2] == ["--wait"] else main()
    # Everything the host reads has been sent: the ``done`` frame is flushed, and each step's printed
    # output was forwarded before its frame (``OutputCapture.cut``). Leave without the interpreter's
    # teardown: with torch loaded it takes 0.5-5 s of CPU and wall time that is not the submission's
    # work, before the host sees the process end (measured on mha: 3.5-5 s at load 12 on 2 cores).
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - a stream the submission broke
            pass
    os._exit(code if isinstance(code, int) else 1)
