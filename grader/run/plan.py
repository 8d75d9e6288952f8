"""Plans: the ordered steps one grading run executes, with their named input arrays.

A ``Plan`` is built on the host by an exercise's ``checks.py`` through ``PlanBuilder``. Its wire
form (``Plan.wire()`` → ``plan.json`` + arrays) is what enters the sandbox: steps and inputs only.
What stays on the host: which check a step belongs to, how it is judged, and how to describe its
input to a candidate. See ``grader.run.runner`` for the wire format.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from grader.run.runner import PLAN_VERSION, step_args

FLOAT_KINDS = "f"
#: Prefix of the ids (and kept objects) of the unmeasured warm-up copies of a probe's first size
#: (``PlanBuilder.warm_up``).
WARM_UP_PREFIX = "warmup."


@dataclass
class Step:
    """One step of a plan.

    Attributes:
        id: unique step id (also the key prefix of its output arrays).
        check: id of the check this step is evidence for.
        wire: the step as the runner sees it (``op``, ``target``, ``args``, ...).
        judge: host-side callable ``judge(ctx) -> Outcome`` (see ``grader.judge.judges``), or None for a
            step that only prepares state (a constructor, a setup call) and is judged through later
            steps.
        describe: how the case reads to a candidate, e.g. ``"x: (4, 7) float32, axis=-1"``.
        meta: free-form host-only data for the judge and diagnoses (never sent to the sandbox).
    """

    id: str
    check: str
    wire: dict
    judge: Callable[..., Any] | None = None
    describe: str = ""
    meta: dict = field(default_factory=dict)


@dataclass
class Plan:
    """Steps plus named input arrays.

    Attributes:
        steps: in execution order.
        arrays: named inputs (NumPy arrays; torch tensors are built from them in the runner).
        forbidden_modules: top-level modules the runner refuses to import for the submission.
        step_timeout_s: default per-step limit inside the runner (CPU seconds of the runner process;
            a wall-clock backstop of several times that catches steps that only wait).
        audit_ops: run every step under the runner's op audit (torch plans only).
        forbidden_ops: ``fnmatch`` patterns of aten ops the audit flags (``aten._scaled_dot_product_*``).
    """

    steps: list[Step] = field(default_factory=list)
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    forbidden_modules: list[str] = field(default_factory=list)
    step_timeout_s: float = 10.0
    audit_ops: bool = False
    forbidden_ops: list[str] = field(default_factory=list)

    def wire(self) -> dict:
        """The ``plan.json`` document sent to the runner."""
        return {
            "version": PLAN_VERSION,
            "steps": [s.wire for s in self.steps],
            "forbidden_modules": list(self.forbidden_modules),
            "step_timeout_s": self.step_timeout_s,
            "audit_ops": self.audit_ops,
            "forbidden_ops": list(self.forbidden_ops),
        }

    def uses_torch(self) -> bool:
        """Whether any step passes a torch tensor (the runner then imports torch)."""
        return any("tensor" in a for s in self.steps for a in _step_args(s.wire))

    def golden(self) -> tuple[dict, dict[str, np.ndarray]]:
        """The same plan with every floating input promoted to float64 (for the golden answer).

        Returns:
            ``(wire_plan, arrays)``: tensor arguments ask for ``float64``; floating arrays are
            cast to ``float64``; integer and boolean inputs (token ids, masks) are unchanged.
        """
        arrays = {k: (v.astype(np.float64) if v.dtype.kind in FLOAT_KINDS else v)
                  for k, v in self.arrays.items()}
        wire = copy.deepcopy(self.wire())  # the steps' own dicts must keep their dtypes
        for step in wire["steps"]:
            for arg in _step_args(step):
                if "tensor" in arg and (arg.get("dtype") or "float32").startswith(("float", "bfloat")):
                    arg["dtype"] = "float64"
        return wire, arrays

    def has_float64(self) -> bool:
        """Whether any input is float64 (a float64 array, or a tensor argument asking for float64)."""
        return any(v.dtype == np.float64 for v in self.arrays.values()) or any(
            a.get("dtype") == "float64" for s in self.steps for a in _step_args(s.wire) if "tensor" in a)

    def float32(self) -> tuple[dict, dict[str, np.ndarray]]:
        """The same plan with every float64 input rounded to float32 (the float32-internals answer).

        What a program that computes float64 input in float32 (and casts back) sees: the reference
        run on it gives the error of a plain float32 computation on the float64 cases, the tolerance
        at which checks other than the float64 one judge those cases (``grader.judge.judges``).

        Returns:
            ``(wire_plan, arrays)``: tensor arguments of float64 ask for ``float32``; float64 arrays
            are cast to ``float32``; every other input is unchanged.
        """
        with np.errstate(over="ignore"):  # beyond float32's range becomes inf, as a float32 cast does
            arrays = {k: (v.astype(np.float32) if v.dtype == np.float64 else v) for k, v in self.arrays.items()}
        wire = copy.deepcopy(self.wire())
        for step in wire["steps"]:
            for arg in _step_args(step):
                if "tensor" in arg and arg.get("dtype") == "float64":
                    arg["dtype"] = "float32"
        return wire, arrays

    def step(self, step_id: str) -> Step:
        """The step with id ``step_id``.

        Raises:
            KeyError: no such step.
        """
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)


def round_to_dtype(value: np.ndarray, dtype: str) -> np.ndarray:
    """Round ``value`` to ``float16`` or ``bfloat16`` and return it as float32, without torch.

    float16 is IEEE binary16 (NumPy's cast rounds to nearest even, as torch does). bfloat16 keeps
    the top 16 bits of the float32 pattern, rounded to nearest even on the dropped half, which is
    how ``torch.Tensor.to(torch.bfloat16)`` rounds (``c10/util/BFloat16.h``, ``round_to_nearest_even``).

    Raises:
        ValueError: another dtype.
    """
    v = np.asarray(value, dtype=np.float32)
    if dtype == "float16":
        with np.errstate(over="ignore"):  # beyond 65504 becomes inf, as in torch
            return v.astype(np.float16).astype(np.float32)
    if dtype != "bfloat16":
        raise ValueError(f"cannot round to {dtype}")
    bits = v.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(v), v, rounded).reshape(v.shape)


def _step_args(wire_step: dict) -> list[dict]:
    return step_args(wire_step)


class PlanBuilder:
    """Builds a ``Plan`` step by step.

    Example::

        b = PlanBuilder()
        x = b.array("x", rng.standard_normal((4, 7)).astype(np.float32))
        b.call("values_2d", "softmax", [x], {"axis": b.value(-1)}, judge=close(), describe="...")
        plan = b.plan
    """

    def __init__(self, forbidden_modules: list[str] | None = None, step_timeout_s: float = 10.0):
        self.plan = Plan(forbidden_modules=list(forbidden_modules or []), step_timeout_s=step_timeout_s)
        self._counter = 0

    @classmethod
    def extend(cls, plan: Plan) -> "PlanBuilder":
        """A builder that appends steps (and arrays) to an existing ``plan``."""
        builder = cls()
        builder.plan = plan
        builder._counter = len(plan.steps)
        return builder

    # -- arguments ---------------------------------------------------------------------------------
    def array(self, name: str, value: np.ndarray, *, transpose: list[int] | None = None,
              label: str | None = None) -> dict:
        """Register input array ``name`` and return an argument that hands the step a copy.

        With ``transpose`` the step receives ``np.transpose(stored, transpose)`` where the stored
        array is laid out so that this view equals ``value`` and is not C-contiguous.

        Raises:
            ValueError: ``name`` is already registered with different content.
        """
        value = np.asarray(value)
        if name in self.plan.arrays and not np.array_equal(self.plan.arrays[name], value, equal_nan=True):
            raise ValueError(f"input array {name!r} registered twice with different values")
        self.plan.arrays[name] = value
        arg: dict[str, Any] = {"array": name}
        if transpose is not None:
            arg["transpose"] = list(transpose)
        if label:
            arg["label"] = label
        return arg

    def tensor(self, name: str, value: np.ndarray, *, dtype: str = "float32",
               requires_grad: bool = False, label: str | None = None,
               transpose: list[int] | None = None) -> dict:
        """Register ``value`` and return an argument that hands the step a torch tensor of ``dtype``.

        For ``float16``/``bfloat16`` the stored values are rounded to that dtype first (kept as
        float32), so the golden float64 run sees exactly the numbers the candidate sees. With
        ``transpose`` the step receives a non-contiguous tensor equal to ``value`` (as for ``array``).

        Raises:
            ValueError: ``transpose`` together with ``requires_grad`` (a view is not a leaf).
        """
        if transpose is not None and requires_grad:
            raise ValueError("a transposed tensor argument cannot require gradients")
        value = np.asarray(value)
        if dtype in ("float16", "bfloat16"):
            value = round_to_dtype(value, dtype)
        self.array(name, value)
        arg: dict[str, Any] = {"tensor": name, "dtype": dtype, "requires_grad": requires_grad}
        if transpose is not None:
            arg["transpose"] = list(transpose)
        if label:
            arg["label"] = label
        return arg

    def input(self, name: str, value: np.ndarray, *, track: str, label: str | None = None,
              dtype: str | None = None, requires_grad: bool = False, transpose: list[int] | None = None) -> dict:
        """An input in the form of ``track``: an array (``numpy``) or a tensor (``torch``) of ``value``.

        Args:
            track: ``numpy`` or ``torch``.
            dtype: the tensor's dtype (default: ``value``'s; ``float16``/``bfloat16`` round the stored
                values as ``tensor`` does); numpy inputs keep ``value``'s dtype.
            requires_grad: torch only (the step may then ask for gradients with ``backward``).

        Raises:
            ValueError: an unknown track, or ``requires_grad``/a half ``dtype`` in the numpy track.
        """
        value = np.asarray(value)
        if track == "torch":
            return self.tensor(name, value, dtype=dtype or value.dtype.name, requires_grad=requires_grad,
                               label=label, transpose=transpose)
        if track != "numpy":
            raise ValueError(f"unknown track {track!r}")
        if requires_grad or (dtype is not None and dtype != value.dtype.name):
            raise ValueError("numpy inputs have no gradients and keep their own dtype")
        return self.array(name, value, transpose=transpose, label=label)

    @staticmethod
    def value(value: Any) -> dict:
        """A JSON literal argument (int, float, str, bool, None, lists of those)."""
        return {"value": value}

    @staticmethod
    def mapping(members: dict[str, dict]) -> dict:
        """An argument handing the step a ``dict`` of other arguments (e.g. a parameter dict of
        tensors, each registered with ``tensor(..., label=key)``)."""
        return {"dict": dict(members)}

    @staticmethod
    def obj(name: str) -> dict:
        """An argument referring to an object kept by an earlier ``construct`` step."""
        return {"object": name}

    # -- steps -------------------------------------------------------------------------------------
    def _add(self, check: str, wire: dict, judge, describe: str, meta: dict | None,
             step_id: str | None) -> Step:
        self._counter += 1
        sid = step_id or f"{check}.{self._counter}"
        if any(s.id == sid for s in self.plan.steps):
            raise ValueError(f"duplicate step id {sid!r}")
        wire = {"id": sid, **wire}
        step = Step(id=sid, check=check, wire=wire, judge=judge, describe=describe, meta=dict(meta or {}))
        self.plan.steps.append(step)
        return step

    def call(self, check: str, function: str, args: list[dict] | None = None,
             kwargs: dict[str, dict] | None = None, *, judge=None, describe: str = "",
             meta: dict | None = None, step_id: str | None = None, backward: dict | None = None,
             timeout_s: float | None = None, measure: dict | None = None) -> Step:
        """Add a step calling module-level ``function(*args, **kwargs)``.

        ``measure`` (``{"quantities": ["flops", "peak_bytes", "seconds"], "repeat": n}``) asks the
        runner to measure the call (see ``grader.run.instruments``).
        """
        wire: dict[str, Any] = {"op": "call", "target": function, "args": list(args or []),
                                "kwargs": dict(kwargs or {})}
        if measure:
            wire["measure"] = measure
        if backward:
            wire["backward"] = backward
        if timeout_s:
            wire["timeout_s"] = timeout_s
        return self._add(check, wire, judge, describe, meta, step_id)

    def construct(self, check: str, cls: str, save_as: str, args: list[dict] | None = None,
                  kwargs: dict[str, dict] | None = None, *, judge=None, describe: str = "",
                  meta: dict | None = None, step_id: str | None = None) -> Step:
        """Add a step constructing ``cls(*args, **kwargs)``, kept under ``save_as``."""
        wire = {"op": "construct", "target": cls, "save_as": save_as, "args": list(args or []),
                "kwargs": dict(kwargs or {})}
        return self._add(check, wire, judge, describe, meta, step_id)

    def method(self, check: str, obj: str, name: str, args: list[dict] | None = None,
               kwargs: dict[str, dict] | None = None, *, judge=None, describe: str = "",
               meta: dict | None = None, step_id: str | None = None, measure: dict | None = None,
               backward: dict | None = None) -> Step:
        """Add a step calling ``obj.name(*args, **kwargs)`` on a kept object (``measure`` and
        ``backward`` as in ``call``)."""
        wire = {"op": "method", "target": obj, "name": name, "args": list(args or []),
                "kwargs": dict(kwargs or {})}
        if measure:
            wire["measure"] = measure
        if backward:
            wire["backward"] = backward
        return self._add(check, wire, judge, describe, meta, step_id)

    def warm_up(self, start: int) -> list[Step]:
        """Insert, before the steps from index ``start`` on, unmeasured copies of them (a warm-up).

        A probe's first size would otherwise pay for the one-time set-up of the submission's code path
        (``numpy.ma``'s first-use allocations, torch's first op, einsum's path cache, a lazy import):
        it lands in that size's measured peak, FLOPs or time when the probe steps run without the value
        steps before them (a runner restarted just before the probes). Running the same shapes once,
        unmeasured, first leaves only the per-call cost in the measured sweep. The copies are not
        synchronised with the host (no ``measure``), so the frame handshake and the host's observed
        figures (``grader.sandbox.observe``) still cover exactly the measured steps; they only give
        the submission a call it could already make during the value steps.

        Args:
            start: index into ``plan.steps`` of the first step to copy; every step from there to the
                end (one probe size: its set-up and measured steps) is copied.

        Returns:
            The copies, in order: ids and kept objects prefixed ``WARM_UP_PREFIX``, no ``measure``,
            no judge, ``meta`` ``{"probe": check, "warm_up": True}`` (so value replays skip them).

        Raises:
            ValueError: a copied step acts on a kept object the copied steps do not construct (the
                warm-up would change the state the measured steps see).
        """
        steps = self.plan.steps[start:]
        made = {(s.wire.get("save_as") or s.id): WARM_UP_PREFIX + (s.wire.get("save_as") or s.id)
                for s in steps if s.wire["op"] == "construct"}
        copies = []
        for s in steps:
            wire = copy.deepcopy(s.wire)
            wire.pop("measure", None)
            wire["id"] = WARM_UP_PREFIX + s.id
            used = [wire["target"]] if wire["op"] in ("method", "getattr") else []
            used += [a["object"] for a in step_args(wire) if "object" in a]
            if not set(used) <= set(made):
                raise ValueError(f"step {s.id!r} acts on an object made before its probe size: "
                                 f"{sorted(set(used) - set(made))}")
            if wire["op"] == "construct":
                wire["save_as"] = made[s.wire.get("save_as") or s.id]
            if wire["op"] in ("method", "getattr"):
                wire["target"] = made[wire["target"]]
            for a in step_args(wire):
                if "object" in a:
                    a["object"] = made[a["object"]]
            copies.append(Step(id=wire["id"], check=s.check, wire=wire, describe=f"warm-up: {s.describe}",
                               meta={"probe": s.check, "warm_up": True}))
        if any(c.id == s.id for c in copies for s in self.plan.steps):
            raise ValueError("duplicate step id among the warm-up copies")
        self.plan.steps[start:start] = copies
        self._counter += len(copies)
        return copies

    def getattr(self, check: str, obj: str, name: str, *, judge=None, describe: str = "",
                meta: dict | None = None, step_id: str | None = None) -> Step:
        """Add a step reading attribute ``obj.name`` of a kept object."""
        wire = {"op": "getattr", "target": obj, "name": name, "args": [], "kwargs": {}}
        return self._add(check, wire, judge, describe, meta, step_id)


#: The numeric mask kinds every masked exercise grades in its hidden cases as well as its public ones
#: (issue 24 item 6): the contract's "nonzero / True = may attend" with integers 0/1, integers 0/3 (any
#: nonzero value attends, not only 1), and floats 0.0/0.5/-2.0 (negative values attend too).
NUMERIC_MASK_KINDS = ("0/1 int64", "0/3 int64", "0/0.5/-2 float32")


def numeric_mask(allowed: np.ndarray, kind: str, rng: np.random.Generator) -> tuple[np.ndarray, str]:
    """The bool mask ``allowed`` (True = may attend) written as the numeric mask ``kind``.

    Args:
        allowed: bool array of any shape.
        kind: one of ``NUMERIC_MASK_KINDS``.
        rng: draws which allowed positions hold 0.5 and which -2.0 (float kind only).

    Returns:
        ``(mask, mask_dtype)``: ``int64`` 0/1 or 0/3, or ``float32`` 0.0/0.5/-2.0; zero exactly where
        ``allowed`` is False.

    Raises:
        ValueError: an unknown ``kind``.
    """
    allowed = np.asarray(allowed, dtype=bool)
    if kind == "0/1 int64":
        return allowed.astype(np.int64), "int64"
    if kind == "0/3 int64":
        return allowed.astype(np.int64) * np.int64(3), "int64"
    if kind == "0/0.5/-2 float32":
        return (allowed * rng.choice([0.5, -2.0], size=allowed.shape)).astype(np.float32), "float32"
    raise ValueError(f"unknown numeric mask kind {kind!r}; expected one of {NUMERIC_MASK_KINDS}")
