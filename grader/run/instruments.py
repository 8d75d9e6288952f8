"""Measuring instruments for complexity probes, used by the runner inside the sandbox.

Like ``runner.py`` this file is copied into the sandbox, so it imports only the standard library and
NumPy at module level (torch lazily, for torch plans). It measures; it never judges — verdicts are
computed on the host by ``grader.judge.probes``.

Quantities, per measured step:

``flops``
    NumPy: inputs are handed over as ``CountingArray`` (an ndarray subclass) whose
    ``__array_ufunc__``/``__array_function__`` count matmul-type work by its FLOP formula
    (``2*m*k*n`` per product, as ``torch.utils.flop_counter`` counts ``mm``) and elementwise ufuncs
    and reductions by elements written/read. When the submission converts the inputs away
    (``np.asarray``) the trail is lost: ``trail_lost`` is reported and the host falls back to time.
    torch: a ``TorchDispatchMode`` sees every aten op: matmul-type ops by
    ``torch.utils.flop_counter``'s formulas, every other op by elements read and written (so a
    product written as multiply-then-sum is still counted).
``peak_bytes``
    NumPy: ``tracemalloc`` peak during the step (NumPy reports its buffers to it). torch on CPU: peak
    of live tensor storage bytes tracked by the same dispatch mode; on CUDA,
    ``torch.cuda.max_memory_allocated``.
``seconds``
    minimum over ``repeat`` runs of a monotonic clock (CUDA events where the tensors live on a GPU).
"""

from __future__ import annotations

import time
import tracemalloc
import weakref
from typing import Any, Callable

import numpy as np

MATMUL_FUNCS = {"dot", "vdot", "inner", "outer", "tensordot", "einsum", "matmul", "kron"}


class _Counter:
    """Accumulates work while ``active``; a reentrancy depth avoids counting a function twice."""

    def __init__(self) -> None:
        self.active = False
        self.depth = 0
        self.matmul_flops = 0
        self.elementwise = 0
        self.events = 0

    def reset(self) -> None:
        self.matmul_flops = self.elementwise = self.events = 0


COUNTER = _Counter()


def _plain(x: Any) -> Any:
    return x.view(np.ndarray) if isinstance(x, CountingArray) else x


def _wrap(x: Any) -> Any:
    if type(x) is np.ndarray:
        return x.view(CountingArray)
    if isinstance(x, tuple):
        return tuple(_wrap(v) for v in x)
    return x


def _matmul_flops(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> int:
    """``2 * m * k * n`` per matrix product, times the broadcast batch (as in ``flop_counter.mm``)."""
    k = a.shape[-1] if a.ndim else 1
    return int(2 * k * max(np.size(out), 1))


def _einsum_flops(args: tuple, out: Any) -> int:
    """2 * the size of the full index space of an einsum (every index summed or kept)."""
    spec = args[0] if args and isinstance(args[0], str) else None
    operands = [np.asarray(_plain(a)) for a in args[1:]] if spec else []
    if not spec:
        return 2 * int(np.size(out))
    sizes: dict[str, int] = {}
    inputs = spec.split("->")[0].split(",")
    for sub, op in zip(inputs, operands):
        sub = sub.replace("...", "")
        for letter, dim in zip(sub[::-1], op.shape[::-1]):
            sizes[letter] = max(sizes.get(letter, 1), dim)
    batch = 1
    for op, sub in zip(operands, inputs):
        if "..." in sub:
            n_named = len(sub.replace("...", ""))
            batch = max(batch, int(np.prod(op.shape[:op.ndim - n_named])) if op.ndim > n_named else 1)
    total = batch
    for dim in sizes.values():
        total *= dim
    return 2 * int(total)


class CountingArray(np.ndarray):
    """An ndarray that counts the work done with it while ``COUNTER.active`` (see module doc)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain_in = tuple(_plain(i) for i in inputs)
        kwargs = {k: (tuple(_plain(o) for o in v) if k == "out" else _plain(v)) for k, v in kwargs.items()}
        COUNTER.depth += 1
        try:
            result = getattr(ufunc, method)(*plain_in, **kwargs)
        finally:
            COUNTER.depth -= 1
        if COUNTER.active and COUNTER.depth == 0:
            COUNTER.events += 1
            if ufunc is np.matmul and method == "__call__":
                COUNTER.matmul_flops += _matmul_flops(np.asarray(plain_in[0]), np.asarray(plain_in[1]), result)
            else:  # elements read and written
                outs = result if isinstance(result, tuple) else (result,)
                COUNTER.elementwise += int(sum(np.size(a) for a in plain_in if isinstance(a, np.ndarray))
                                           + sum(np.size(r) for r in outs))
        return _wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        name = getattr(func, "__name__", "")
        plain_args = tuple(_plain(a) if not isinstance(a, (list, tuple)) else type(a)(_plain(v) for v in a)
                           for a in args)
        plain_kwargs = {k: _plain(v) for k, v in kwargs.items()}
        COUNTER.depth += 1
        try:
            result = func(*plain_args, **plain_kwargs)
        finally:
            COUNTER.depth -= 1
        if COUNTER.active and COUNTER.depth == 0:
            COUNTER.events += 1
            if name == "einsum":
                COUNTER.matmul_flops += _einsum_flops(plain_args, result)
            elif name in MATMUL_FUNCS and len(plain_args) >= 2:
                a = np.asarray(plain_args[0])
                COUNTER.matmul_flops += 2 * max(int(np.size(result)), 1) * (a.shape[-1] if a.ndim else 1)
            else:  # elements read and written
                COUNTER.elementwise += int(sum(np.size(a) for a in plain_args if isinstance(a, np.ndarray))
                                           + (np.size(result) if isinstance(result, np.ndarray) else 0))
        return _wrap(result)


def instrument_numpy(value: Any) -> Any:
    """Hand ``value`` to a measured step as a ``CountingArray`` when it is a floating ndarray."""
    if type(value) is np.ndarray and value.dtype.kind == "f":
        return value.view(CountingArray)
    return value


# -- torch -----------------------------------------------------------------------------------------

def _torch_counter_mode():
    import torch  # noqa: PLC0415 - torch plans only
    from torch.utils._python_dispatch import TorchDispatchMode  # noqa: PLC0415
    from torch.utils.flop_counter import flop_registry  # noqa: PLC0415

    class WorkCounterMode(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            # Keeps torch from importing torch._dynamo (~2.4 s) on the first dispatch; we never compile.
            return False

        """Counts every aten op: matmul-type by FLOP formula, others by elements read + written;
        tracks live storage bytes of the tensors it sees created (peak on CPU)."""

        def __init__(self) -> None:
            super().__init__()
            self.matmul_flops = 0
            self.elementwise = 0
            self.events = 0
            self.live = 0
            self.peak = 0
            self._storages: dict[int, list] = {}

        def _track(self, t) -> None:
            try:
                storage = t.untyped_storage()
                ptr, nbytes = storage.data_ptr(), storage.nbytes()
            except Exception:  # noqa: BLE001 - meta/sparse tensors have no plain storage
                return
            entry = self._storages.get(ptr)
            if entry is None:
                entry = self._storages[ptr] = [nbytes, 0]
                self.live += nbytes
                self.peak = max(self.peak, self.live)
            entry[1] += 1

            def release(ptr=ptr, mode=weakref.ref(self)) -> None:
                m = mode()
                if m is None or ptr not in m._storages:
                    return
                e = m._storages[ptr]
                e[1] -= 1
                if e[1] <= 0:
                    m.live -= e[0]
                    del m._storages[ptr]

            weakref.finalize(t, release)

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            self.events += 1
            packet = func._overloadpacket
            if packet in flop_registry:
                self.matmul_flops += int(flop_registry[packet](*args, **kwargs, out_val=out))
            else:
                flat = [*args, *kwargs.values(), *(out if isinstance(out, (tuple, list)) else (out,))]
                self.elementwise += int(sum(a.numel() for a in flat if isinstance(a, torch.Tensor)))
            for o in (out if isinstance(out, (tuple, list)) else (out,)):
                if isinstance(o, torch.Tensor):
                    self._track(o)
            return out

    return WorkCounterMode()


class Measurement:
    """Context manager measuring one step.

    Args:
        quantities: subset of ``{"flops", "peak_bytes", "seconds"}``.
        uses_torch: the step's arguments are torch tensors.
        clock: monotonic clock in seconds (injectable for tests).

    After the ``with`` block, ``report`` holds the numbers (JSON-able).
    """

    def __init__(self, quantities: list[str], uses_torch: bool = False,
                 clock: Callable[[], float] = time.perf_counter, device: str = "cpu"):
        self.quantities = set(quantities)
        self.uses_torch = uses_torch
        self.clock = clock
        self.device = device
        self._cuda = uses_torch and device.startswith("cuda")
        self.report: dict[str, Any] = {}
        self._mode = None
        self._tracing = False

    def __enter__(self) -> "Measurement":
        if self.uses_torch and ({"flops", "peak_bytes"} & self.quantities):
            self._mode = _torch_counter_mode()
            self._mode.__enter__()
        elif "flops" in self.quantities:
            COUNTER.reset()
            COUNTER.active = True
        if "peak_bytes" in self.quantities and not self.uses_torch:
            self._tracing = not tracemalloc.is_tracing()
            if self._tracing:
                tracemalloc.start()
            tracemalloc.reset_peak()
            self._base = tracemalloc.get_traced_memory()[0]
        if self._cuda:
            import torch  # noqa: PLC0415

            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            self._cuda_base = torch.cuda.memory_allocated()
            self._events = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            self._events[0].record()
        self._start = self.clock()
        return self

    def __exit__(self, *exc) -> None:
        elapsed = self.clock() - self._start
        self.report["device"] = self.device
        if self._cuda:
            import torch  # noqa: PLC0415

            self._events[1].record()
            torch.cuda.synchronize()
            elapsed = self._events[0].elapsed_time(self._events[1]) / 1e3  # CUDA events count ms
        if "seconds" in self.quantities:
            self.report["seconds"] = elapsed
        if "peak_bytes" in self.quantities and not self.uses_torch:
            _current, peak = tracemalloc.get_traced_memory()
            if self._tracing:
                tracemalloc.stop()
            self.report["peak_bytes"] = int(max(peak - self._base, 0))
        if self._mode is not None:
            self._mode.__exit__(*exc)
            if "flops" in self.quantities:
                self.report["flops"] = self._mode.matmul_flops + self._mode.elementwise
                self.report["matmul_flops"] = self._mode.matmul_flops
                self.report["elementwise"] = self._mode.elementwise
            if "peak_bytes" in self.quantities:
                if self._cuda:
                    import torch  # noqa: PLC0415

                    self.report["peak_bytes"] = int(torch.cuda.max_memory_allocated() - self._cuda_base)
                else:
                    self.report["peak_bytes"] = int(self._mode.peak)
        elif "flops" in self.quantities:
            COUNTER.active = False
            self.report["flops"] = COUNTER.matmul_flops + COUNTER.elementwise
            self.report["matmul_flops"] = COUNTER.matmul_flops
            self.report["elementwise"] = COUNTER.elementwise
            self.report["trail_lost"] = COUNTER.events == 0
        return None


def min_seconds(fn: Callable[[], Any], repeat: int, clock: Callable[[], float] = time.perf_counter,
                sync: Callable[[], Any] | None = None) -> float:
    """Minimum wall time of ``repeat`` calls of ``fn`` (seconds), the noise-robust estimator.

    ``sync`` (e.g. ``torch.cuda.synchronize``) runs before each clock reading, so queued GPU work is
    counted in the call that queued it.
    """
    best = float("inf")
    for _ in range(max(repeat, 1)):
        if sync:
            sync()
        start = clock()
        fn()
        if sync:
            sync()
        best = min(best, clock() - start)
    return best
