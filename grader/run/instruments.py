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
``largest_numel``
    elements of the largest single array the step allocated (a view allocates nothing): torch, the
    largest new storage the dispatch mode sees (in elements of the tensor that created it); NumPy,
    the largest array owning its data that a ufunc, a NumPy function or a constructor returned while
    the inputs are counting arrays (``SIZE_CONSTRUCTORS`` such as ``np.arange`` hand out counting
    arrays too in such a step, so ``arange(L_q)[:, None] >= arange(L_k)`` is seen). It tells an
    ``L_q x L_k`` bool mask held once from the temporaries of a tiled loop, which peak bytes cannot
    at small sizes (one byte per element beside ``L_q x block_size`` float32 temporaries).
``seconds``
    minimum over ``repeat`` runs of a monotonic clock (CUDA events where the tensors live on a GPU).
"""

from __future__ import annotations

import functools
import sys
import threading
import time
import tracemalloc
import weakref
from typing import Any, Callable, Iterable

import numpy as np

MATMUL_FUNCS = {"dot", "vdot", "inner", "outer", "tensordot", "einsum", "matmul", "kron"}
#: NumPy functions that only move, copy or convert data: their result keeps the provenance (the share
#: of its elements that came from tracked arrays such as W_k/W_v), weighted by the inputs' sizes.
MOVEMENT_FUNCS = {
    "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "block", "repeat", "tile",
    "broadcast_to", "broadcast_arrays", "split", "array_split", "hsplit", "vsplit", "dsplit", "swapaxes",
    "moveaxis", "rollaxis", "transpose", "reshape", "squeeze", "expand_dims", "ravel", "copy",
    "ascontiguousarray", "asfortranarray", "require", "take", "take_along_axis", "atleast_1d",
    "atleast_2d", "atleast_3d", "flip", "fliplr", "flipud", "roll", "append", "array_equal",
    "empty_like", "zeros_like", "ones_like", "full_like", "real", "diagonal", "compress", "choose",
}
#: numpy functions replaced (in ``numpy``'s namespace) by thin wrappers while counting is installed:
#: conversions keep a counting array a counting array; constructors hand out counting arrays inside
#: a measured step, so work done on buffers the submission allocates is counted too.
CONVERSIONS = ("array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "copy", "require",
               "from_dlpack")
CONSTRUCTORS = ("empty", "zeros", "ones", "full")
#: Product functions also counted when called on plain ndarrays (a trail lost some other way).
PLAIN_PRODUCTS = ("dot", "vdot", "inner", "outer", "tensordot", "einsum", "kron")
#: Constructors of index arrays that hand out counting arrays only in a step measuring
#: ``largest_numel`` alone (``COUNTER.sizes``): a FLOP count is unchanged by them.
SIZE_CONSTRUCTORS = ("arange", "tri", "eye", "identity", "indices", "linspace")


class _Counter:
    """Accumulates work while ``active``; a reentrancy depth avoids counting a function twice."""

    def __init__(self) -> None:
        self.active = False
        self.thread = None
        self.depth = 0
        self.matmul_flops = 0
        self.elementwise = 0
        self.kv_flops = 0.0
        self.events = 0
        self.largest = 0
        self.sizes = False

    def reset(self) -> None:
        self.matmul_flops = self.elementwise = self.events = self.largest = 0
        self.kv_flops = 0.0
        self.sizes = False

    def note(self, result: Any) -> None:
        """Keep the size of ``result`` (an array, or a tuple/list of them) in ``largest`` when it owns
        its data (a view allocates nothing)."""
        for r in result if isinstance(result, (tuple, list)) else (result,):
            if isinstance(r, np.ndarray) and r.base is None and r.size > self.largest:
                self.largest = int(r.size)

    def here(self) -> bool:
        """Counting is on in the calling thread (the host grades in several threads at once)."""
        return self.active and self.thread == threading.get_ident()


COUNTER = _Counter()


_VIEW = np.ndarray.view


def _plain(x: Any) -> Any:
    return _VIEW(x, np.ndarray) if isinstance(x, CountingArray) else x


def _share(x: Any) -> float:
    """Share (0..1) of the elements of ``x`` that came from tracked arrays (0 for anything else)."""
    return float(getattr(x, "_kv", 0.0) or 0.0) if isinstance(x, CountingArray) else 0.0


def _arrays_in(args: Any) -> list:
    found = []
    for a in args:
        if isinstance(a, np.ndarray):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found.extend(v for v in a if isinstance(v, np.ndarray))
    return found


def _pointwise_share(operands: Iterable[tuple[float, int]], size: int) -> float | None:
    """Provenance of an elementwise result of ``size`` elements, from its operands' ``(share, size)``:
    the mean share of the operands of that size (those it was computed from element by element; a
    scalar or a broadcast row is a parameter of the transform), or None when there is none. Used by
    both counters (NumPy's ufuncs, torch's pointwise ops). ``W_k * scale`` is W_k scaled, and a
    product with it projects keys as one with W_k does (helper hunt, issue 24: the scale folded into
    W_k and W_v times 1.0 lost their provenance, and keys projected at every query head had full
    marks)."""
    same = [share for share, n in operands if n == size]
    return sum(same) / len(same) if same else None


def _weighted_share(arrays: list) -> float:
    total = sum(int(a.size) for a in arrays)  # .size, not np.size: that would be counted
    if not total:
        return 0.0
    return sum(_share(a) * int(a.size) for a in arrays) / total


def _wrap(x: Any, share: float = 0.0) -> Any:
    if type(x) is np.ndarray:
        out = np.ndarray.view(x, CountingArray)
        out._kv = share
        return out
    if isinstance(x, (tuple, list)):
        return type(x)(_wrap(v, share) for v in x)
    return x


def _matmul_flops(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> int:
    """``2 * m * k * n`` per matrix product, times the broadcast batch (as in ``flop_counter.mm``)."""
    k = a.shape[-1] if a.ndim else 1
    return int(2 * k * max(np.size(out), 1))


def _einsum_flops(args: tuple, out: Any) -> int:
    """2 * the size of the full index space of an einsum (every index summed or kept)."""
    spec = args[0] if args and isinstance(args[0], str) else None
    if not spec:
        return 2 * int(np.size(out))
    return _einsum_space(spec, tuple(a.shape if isinstance(a, np.ndarray) else np.shape(a) for a in args[1:]))


@functools.lru_cache(maxsize=4096)
def _einsum_space(spec: str, shapes: tuple) -> int:
    """``_einsum_flops`` for operands of these shapes (kept: a loop repeats the same few einsums)."""
    sizes: dict[str, int] = {}
    inputs = spec.split("->")[0].split(",")
    for sub, shape in zip(inputs, shapes):
        sub = sub.replace("...", "")
        for letter, dim in zip(sub[::-1], shape[::-1]):
            sizes[letter] = max(sizes.get(letter, 1), dim)
    batch = 1
    for shape, sub in zip(shapes, inputs):
        if "..." in sub:
            n_named = len(sub.replace("...", ""))
            batch = max(batch, int(np.prod(shape[:len(shape) - n_named])) if len(shape) > n_named else 1)
    total = batch
    for dim in sizes.values():
        total *= dim
    return 2 * int(total)


def _einsum_path_flops(args: tuple, optimize: Any) -> int | None:
    """2 * the index space of each pairwise contraction that ``np.einsum(..., optimize=optimize)``
    performs (the path ``np.einsum_path`` chooses), summed; None where the subscripts are implicit or
    use ``...`` (the naive count of ``_einsum_flops`` then stands). With ``optimize`` NumPy contracts
    three or more operands pair by pair instead of looping over their whole joint index space, so
    ``einsum("bhqk,bhkd,hdo->bqo", w, v, W_o, optimize=True)`` costs two matmuls, not their product."""
    spec = args[0] if args and isinstance(args[0], str) else None
    if not spec or "->" not in spec or "..." in spec:
        return None
    operands = [np.asarray(_plain(a)) for a in args[1:]]
    inputs, output = spec.replace(" ", "").split("->")
    subs = inputs.split(",")
    if len(subs) != len(operands):
        return None
    try:
        path, _ = np.einsum_path(spec, *operands, optimize="greedy" if optimize is True else optimize)
    except (ValueError, TypeError):
        return None
    sizes: dict[str, int] = {}
    for sub, op in zip(subs, operands):
        for letter, dim in zip(sub, op.shape):
            sizes[letter] = max(sizes.get(letter, 1), dim)
    ops, total = list(subs), 0
    for step in path[1:]:
        picked = [ops[i] for i in step]
        for i in sorted(step, reverse=True):
            del ops[i]
        index = set("".join(picked))
        keep = index & (set("".join(ops)) | set(output))
        total += 2 * int(np.prod([sizes[c] for c in index], dtype=np.int64))
        ops.append("".join(sorted(keep)))
    return total


class CountingArray(np.ndarray):
    """An ndarray that counts the work done with it while ``COUNTER.active`` (see module doc).

    ``_kv`` is its provenance: the share (0..1) of its elements that came from a tracked array (the
    K/V projection weights of a probe step). Views, slices, ``astype`` and copies keep it
    (``__array_finalize__``); movement functions (``MOVEMENT_FUNCS``) weight it by size; computed
    results start at 0. A product with a tracked operand adds ``flops * share`` to ``kv_flops``.
    """

    _kv = 0.0

    def __array_finalize__(self, obj) -> None:
        self._kv = getattr(obj, "_kv", 0.0) if isinstance(obj, CountingArray) else 0.0

    def view(self, *args, **kwargs):
        """``ndarray.view``; while counting, a view as a plain ``np.ndarray`` stays a counting array."""
        if COUNTER.here():
            args = tuple(CountingArray if a is np.ndarray else a for a in args)
            if kwargs.get("type") is np.ndarray:
                kwargs["type"] = CountingArray
        return super().view(*args, **kwargs)

    def dot(self, b, out=None):
        """``ndarray.dot`` as ``np.dot`` (counted by its FLOP formula): the method calls the C product
        directly, past ``__array_function__``, so ``x.dot(W)`` counted nothing (a per-query
        ``keys.dot(q_i)`` over every key escaped a FLOP probe, and correct projections written with
        ``.dot`` were charged for work the reference's ``@`` is counted for: helper hunt, issue 24)."""
        return np.dot(self, b, out=out)

    # The two hooks below run for every NumPy call a measured step makes (a per-query loop makes
    # thousands): they are written for speed (one pass over the operands, ``.size`` rather than
    # ``np.size``), with the semantics of ``_share``, ``_plain`` and ``_wrap``.
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        share = 0.0
        plain_in = []
        for i in inputs:
            if isinstance(i, CountingArray):
                kv = i._kv
                if kv and kv > share:
                    share = float(kv)
                plain_in.append(_VIEW(i, np.ndarray))
            else:
                plain_in.append(i)
        if kwargs:
            kwargs = {k: (tuple(_plain(o) for o in v) if k == "out" else _plain(v)) for k, v in kwargs.items()}
        counter = COUNTER
        counter.depth += 1
        try:
            result = getattr(ufunc, method)(*plain_in, **kwargs)
        finally:
            counter.depth -= 1
        if counter.active and counter.depth == 0:
            counter.events += 1
            counter.note(result)
            if ufunc is np.matmul and method == "__call__":
                work = _matmul_flops(np.asarray(plain_in[0]), np.asarray(plain_in[1]), result)
                counter.matmul_flops += work
            else:  # elements read and written
                work = 0
                for a in plain_in:
                    if isinstance(a, np.ndarray):
                        work += a.size
                for r in (result if isinstance(result, tuple) else (result,)):
                    work += r.size if isinstance(r, (np.ndarray, np.generic)) else int(np.size(r))
                counter.elementwise += work
            counter.kv_flops += work * share
        if share and ufunc is not np.matmul and method == "__call__" and type(result) is np.ndarray:
            share = _pointwise_share(((_share(i), int(i.size)) for i in inputs if isinstance(i, np.ndarray)),
                                     int(result.size))
            return _wrap(result, share or 0.0)
        return _wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        name = getattr(func, "__name__", "")
        tracked = _arrays_in(args)
        if kwargs:
            tracked += _arrays_in(kwargs.values())
        share = 0.0
        for a in tracked:
            kv = a._kv if isinstance(a, CountingArray) else 0.0
            if kv and kv > share:
                share = float(kv)
        plain_args = tuple(_VIEW(a, np.ndarray) if isinstance(a, CountingArray)
                           else type(a)(_plain(v) for v in a) if isinstance(a, (list, tuple)) else a
                           for a in args)
        plain_kwargs = {k: _plain(v) for k, v in kwargs.items()} if kwargs else {}
        COUNTER.depth += 1
        try:
            result = func(*plain_args, **plain_kwargs)
        finally:
            COUNTER.depth -= 1
        if COUNTER.active and COUNTER.depth == 0:
            COUNTER.note(result)
            _count_function(name, plain_args, result, share, plain_kwargs)
        if name in MOVEMENT_FUNCS:
            return _wrap(result, _weighted_share(tracked) if share else 0.0)
        return _wrap(result)


def _count_function(name: str, plain_args: tuple, result: Any, share: float, kwargs: dict | None = None) -> None:
    """Add one NumPy function call's work to ``COUNTER`` (products by FLOP formula, else elements)."""
    COUNTER.events += 1
    if name == "einsum":
        optimize = (kwargs or {}).get("optimize", False)
        work = (optimize and _einsum_path_flops(plain_args, optimize)) or _einsum_flops(plain_args, result)
        COUNTER.matmul_flops += work
    elif name in MATMUL_FUNCS and len(plain_args) >= 2:
        a = np.asarray(plain_args[0])
        work = 2 * max(int(np.size(result)), 1) * (a.shape[-1] if a.ndim else 1)
        COUNTER.matmul_flops += work
    else:  # elements read and written
        work = result.size if isinstance(result, np.ndarray) else 0
        for a in plain_args:
            if isinstance(a, np.ndarray):
                work += a.size
        COUNTER.elementwise += int(work)
    if name not in MOVEMENT_FUNCS:  # moving tracked data is not projecting with it
        COUNTER.kv_flops += work * share


_HOOKS: dict[str, Any] = {}
#: torch methods replaced while a torch-track step counts work (``_install_tensor_numpy_hook``).
_TORCH_HOOKS: dict[str, Any] = {}


def _conversion_hook(orig: Callable) -> Callable:
    @functools.wraps(orig)
    def convert(*args, **kwargs):
        result = orig(*args, **kwargs)
        if COUNTER.here() and type(result) is np.ndarray:
            src = args[0] if args else next(iter(kwargs.values()), None)
            if isinstance(src, CountingArray):
                return _wrap(result, _share(src))
            if _is_tensor(src):  # a torch tensor's values in NumPy: the work done with them counts too
                return _wrap(result)
        return result
    return convert


def _is_tensor(x: Any) -> bool:
    """Whether ``x`` is a torch tensor (without importing torch where the submission did not)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _tensor_numpy_hook(orig: Callable) -> Callable:
    """``torch.Tensor.numpy`` handing out a counting array inside a measured step: NumPy work on a
    tensor's values in the torch track is work too (helper hunt, issue 24: a quadratic linear attention
    computed in NumPy inside a torch autograd.Function was counted at 0.02x the reference's work)."""
    @functools.wraps(orig)
    def numpy(self, *args, **kwargs):
        result = orig(self, *args, **kwargs)
        if COUNTER.here() and type(result) is np.ndarray:
            return _wrap(result)
        return result
    return numpy


def _constructor_hook(orig: Callable) -> Callable:
    @functools.wraps(orig)
    def construct(*args, **kwargs):
        result = orig(*args, **kwargs)
        if COUNTER.here() and type(result) is np.ndarray:
            COUNTER.note(result)
            return _wrap(result)
        return result
    return construct


def _size_constructor_hook(orig: Callable) -> Callable:
    """``SIZE_CONSTRUCTORS``: a counting array only where ``COUNTER.sizes`` (``largest_numel`` alone)."""
    @functools.wraps(orig)
    def construct(*args, **kwargs):
        result = orig(*args, **kwargs)
        if COUNTER.here() and COUNTER.sizes and type(result) is np.ndarray:
            COUNTER.note(result)
            return _wrap(result)
        return result
    return construct


def _product_hook(orig: Callable) -> Callable:
    @functools.wraps(orig)
    def product(*args, **kwargs):
        if not (COUNTER.here() and COUNTER.depth == 0):
            return orig(*args, **kwargs)
        found = _arrays_in(args)
        if found and any(isinstance(a, CountingArray) for a in found + _arrays_in(kwargs.values())):
            return orig(*args, **kwargs)  # a counting operand: counted by __array_function__
        COUNTER.depth += 1
        try:
            result = orig(*args, **kwargs)
        finally:
            COUNTER.depth -= 1
        _count_function(orig.__name__, args, result, 0.0, kwargs)
        return _wrap(result)
    return product


def install_numpy_hooks() -> None:
    """Keep the counting trail through what ordinary NumPy code does (idempotent).

    Replaces, in ``numpy``'s namespace, the conversions (``np.array``, ``np.asarray``, ...) by
    wrappers that return a counting array when given one, the constructors (``np.zeros``, ...) by
    wrappers that return counting arrays inside a measured step, and the product functions
    (``np.dot``, ``np.einsum``, ...) by wrappers that also count plain operands. Outside a measured
    step, or in another thread, every wrapper returns exactly what NumPy returns. ``x.view(np.ndarray)``
    is kept counting by ``CountingArray.view``. The runner calls this before importing the submission,
    so ``from numpy import asarray`` binds the wrapper too.
    """
    if _HOOKS:
        return
    for names, hook in ((CONVERSIONS, _conversion_hook), (CONSTRUCTORS, _constructor_hook),
                        (PLAIN_PRODUCTS, _product_hook), (SIZE_CONSTRUCTORS, _size_constructor_hook)):
        for name in names:
            orig = getattr(np, name, None)
            if orig is None:
                continue
            _HOOKS[name] = orig
            setattr(np, name, hook(orig))


def _install_tensor_numpy_hook() -> None:
    """Replace ``torch.Tensor.numpy`` by ``_tensor_numpy_hook`` (idempotent; torch is imported by then)."""
    torch = sys.modules.get("torch")
    if torch is None or _TORCH_HOOKS:
        return
    _TORCH_HOOKS["Tensor.numpy"] = torch.Tensor.numpy
    torch.Tensor.numpy = _tensor_numpy_hook(torch.Tensor.numpy)


def _start_numpy_counting(sizes: bool) -> None:
    """Count NumPy work on counting arrays in this thread from now on (``COUNTER`` reset); ``sizes``:
    index constructors hand out counting arrays too (a step measuring ``largest_numel`` alone)."""
    install_numpy_hooks()
    COUNTER.reset()
    COUNTER.sizes = sizes
    COUNTER.thread = threading.get_ident()
    COUNTER.active = True


def _stop_numpy_counting() -> None:
    """Stop what ``_start_numpy_counting`` started; ``COUNTER``'s figures stay to be read."""
    COUNTER.active = False
    COUNTER.thread = None
    COUNTER.sizes = False


def track(value: Any) -> Any:
    """Mark ``value`` (a counting array or a torch tensor) as tracked: the work of products that
    consume it, or data moved from it, is reported as ``kv_flops``. Returns ``value``."""
    if isinstance(value, CountingArray):
        value._kv = 1.0
    elif type(value).__module__.startswith("torch"):
        try:
            value._grader_kv = 1.0
            _TORCH_TRACKED[0] += 1
        except (AttributeError, TypeError):  # pragma: no cover - plain tensors accept attributes
            pass
    return value


def instrument_numpy(value: Any) -> Any:
    """Hand ``value`` to a measured step as a ``CountingArray`` when it is a floating ndarray."""
    if type(value) is np.ndarray and value.dtype.kind == "f":
        return value.view(CountingArray)
    return value


# -- torch -----------------------------------------------------------------------------------------

#: aten ops (overload packet names) that only move or convert data: their output keeps the tracked
#: share of their inputs (``func.is_view`` ops too); every other op consuming a tracked tensor adds
#: its work times that share to ``kv_flops``.
TORCH_MOVEMENT = {
    "view", "_unsafe_view", "reshape", "_reshape_alias", "slice", "select", "t", "transpose", "permute",
    "expand", "unsqueeze", "squeeze", "clone", "contiguous", "_to_copy", "to", "alias", "detach",
    "lift_fresh", "lift_fresh_copy", "cat", "stack", "repeat", "repeat_interleave", "index_select",
    "index", "split", "split_with_sizes", "unbind", "chunk", "narrow", "as_strided", "copy_", "copy",
    "unfold", "flatten", "movedim", "expand_as", "view_as", "expand_copy", "view_copy", "permute_copy",
    "transpose_copy", "slice_copy", "select_copy", "unsqueeze_copy", "t_copy", "squeeze_copy",
    "_unsafe_split", "unsafe_split", "tile", "flip", "roll", "gather", "narrow_copy", "_conj",
    "resolve_conj", "resolve_neg", "hstack", "vstack", "block_diag", "diagonal", "_unsafe_index",
}


#: How many torch tensors ``track`` has marked in this process (a list: mutable from ``track``); while
#: none is, the counting mode skips looking for tracked inputs on every op.
_TORCH_TRACKED = [0]


def _kv_share(t: Any) -> float:
    """Tracked share (0..1) of a tensor's elements (see ``track``)."""
    return float(getattr(t, "_grader_kv", 0.0) or 0.0)


def _torch_counter_mode(on_op: Callable[[Any], None] | None = None, memory: bool = True):
    """A ``TorchDispatchMode`` counting work (see the module docstring); ``on_op`` is called with each
    op overload the first time the mode sees it (the runner's op audit); with ``memory``, it also
    tracks the live storage of every tensor it sees created (``peak``: CPU peak memory), which costs a
    weak reference per tensor and is skipped where peak memory is not measured."""
    import torch  # noqa: PLC0415 - torch plans only
    from torch.utils._python_dispatch import TorchDispatchMode  # noqa: PLC0415
    from torch.utils.flop_counter import flop_registry  # noqa: PLC0415

    Tensor = torch.Tensor

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
            self.kv_flops = 0.0
            self.events = 0
            self.live = 0
            self.peak = 0
            self.largest = 0  # elements of the largest new storage (largest_numel)
            self._storages: dict[int, list] = {}
            # weak references to the tracked tensors, each mapped to its storage's pointer: a plain
            # weakref callback (one per mode, not a closure and a weakref.finalize per tensor) releases
            # the storage's bytes when its last tracked tensor is collected
            # (keyed by the reference's id: two references to one tensor would compare the tensors)
            self._refs: dict[int, tuple[weakref.ref, int]] = {}
            self._ops: dict[int, tuple] = {}
            storages, refs, me = self._storages, self._refs, weakref.ref(self)

            def release(ref: weakref.ref) -> None:
                _ref, ptr = refs.pop(id(ref), (None, None))
                e = storages.get(ptr) if ptr is not None else None
                if e is None:
                    return
                e[1] -= 1
                if e[1] <= 0:
                    del storages[ptr]
                    m = me()
                    if m is not None:
                        m.live -= e[0]

            self._release = release

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
                if self.live > self.peak:
                    self.peak = self.live
                numel = nbytes // max(t.element_size(), 1)
                if numel > self.largest:
                    self.largest = numel
            entry[1] += 1
            ref = weakref.ref(t, self._release)
            self._refs[id(ref)] = (ref, ptr)

        def _op_info(self, func) -> tuple:
            """What the dispatch needs to know of one op overload, looked up once per mode: its
            FLOP formula (or None), whether it is a view, whether it only moves data, its name."""
            packet = func._overloadpacket
            name = packet.__name__
            info = (func, flop_registry.get(packet), func.is_view, name in TORCH_MOVEMENT or func.is_view, name)
            self._ops[id(func)] = info  # the overload is kept in the value, so its id stays its own
            if on_op is not None:
                on_op(func)  # the op audit records an overload once: the first sighting is all it needs
            return info

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            info = self._ops.get(id(func))
            if info is None:
                info = self._op_info(func)
            _func, flop, is_view, moves, name = info
            out = func(*args, **kwargs) if kwargs else func(*args)
            self.events += 1
            inputs = []
            for a in (*args, *kwargs.values()) if kwargs else args:
                if isinstance(a, Tensor):
                    inputs.append(a)
                elif isinstance(a, (tuple, list)):
                    inputs.extend(v for v in a if isinstance(v, Tensor))
            outs = ([o for o in out if isinstance(o, Tensor)] if isinstance(out, (tuple, list))
                    else [out] if isinstance(out, Tensor) else [])
            if flop is not None:
                work = int(flop(*args, **(kwargs or {}), out_val=out))
                self.matmul_flops += work
            elif is_view:  # a view reads and writes nothing: slicing a preallocated buffer is free
                work = 0
            else:
                work = 0
                for a in inputs:
                    work += a.numel()
                for o in outs:
                    work += o.numel()
                self.elementwise += work
            share = max((_kv_share(a) for a in inputs), default=0.0) if _TORCH_TRACKED[0] else 0.0
            if share:
                if moves:
                    # data moved from tracked tensors: the result keeps their share (by size for a cat)
                    floats = [a for a in inputs if a.is_floating_point()]
                    if name == "copy_":
                        floats = floats[1:]
                    if name in ("cat", "stack", "hstack", "vstack", "block_diag") and len(floats) > 1:
                        total = sum(a.numel() for a in floats) or 1
                        moved = sum(_kv_share(a) * a.numel() for a in floats) / total
                    else:
                        moved = max((_kv_share(a) for a in floats), default=0.0)
                    for o in outs:
                        try:
                            o._grader_kv = moved
                        except (AttributeError, TypeError):  # pragma: no cover
                            pass
                else:
                    self.kv_flops += work * share
                    if flop is None and not is_view:
                        # an elementwise transform of tracked data (W_k * scale, W_v.mul(1.0)) is that
                        # data transformed: a product with it still projects keys and values
                        for o in outs:
                            derived = _pointwise_share(((_kv_share(a), a.numel()) for a in inputs), o.numel())
                            if derived is not None:
                                try:
                                    o._grader_kv = derived
                                except (AttributeError, TypeError):  # pragma: no cover
                                    pass
            if memory:  # live storage only where peak memory is measured (a FLOP probe needs none)
                for o in outs:
                    self._track(o)
            return out

    return WorkCounterMode()


class Measurement:
    """Context manager measuring one step.

    Args:
        quantities: subset of ``{"flops", "kv_flops", "peak_bytes", "largest_numel", "seconds"}``.
        uses_torch: the step's arguments are torch tensors.
        clock: monotonic clock in seconds (injectable for tests).
        on_op: called with each aten op the torch counting mode dispatches (``counts_torch_ops``),
            before the op runs: the runner's op audit, so a measured step has one dispatch layer.

    After the ``with`` block, ``report`` holds the numbers (JSON-able).
    """

    def __init__(self, quantities: list[str], uses_torch: bool = False,
                 clock: Callable[[], float] = time.perf_counter, device: str = "cpu",
                 on_op: Callable[[Any], None] | None = None):
        self.quantities = set(quantities)
        self.uses_torch = uses_torch
        self.clock = clock
        self.device = device
        self._cuda = uses_torch and device.startswith("cuda")
        self.report: dict[str, Any] = {}
        self._mode = None
        self._tracing = False
        self._on_op = on_op

    @property
    def counts_torch_ops(self) -> bool:
        """Whether the ``with`` block runs under the torch counting mode (and so calls ``on_op``)."""
        return self.uses_torch and bool({"flops", "kv_flops", "peak_bytes", "largest_numel"} & self.quantities)

    def __enter__(self) -> "Measurement":
        if self.counts_torch_ops:
            self._mode = _torch_counter_mode(self._on_op,
                                             memory=bool({"peak_bytes", "largest_numel"} & self.quantities))
            if {"flops", "kv_flops"} & self.quantities:
                # NumPy work on the tensors' values counts too (``Tensor.numpy``, ``np.asarray(t)``,
                # ``np.from_dlpack``, NumPy buffers): the counting arrays see it, the mode the rest
                _install_tensor_numpy_hook()
                _start_numpy_counting(sizes=False)
            self._mode.__enter__()
        elif {"flops", "kv_flops", "largest_numel"} & self.quantities:
            # index arrays count only where no FLOP is counted (the FLOP figures stay what they were)
            _start_numpy_counting(sizes=not {"flops", "kv_flops"} & self.quantities)
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
            if {"flops", "kv_flops"} & self.quantities:
                _stop_numpy_counting()  # started with the mode: its NumPy work adds to the mode's
                numpy_matmul, numpy_elementwise = COUNTER.matmul_flops, COUNTER.elementwise
                self.report["kv_flops"] = float(self._mode.kv_flops)
                self.report["flops"] = (self._mode.matmul_flops + self._mode.elementwise
                                        + numpy_matmul + numpy_elementwise)
                self.report["matmul_flops"] = self._mode.matmul_flops + numpy_matmul
                self.report["elementwise"] = self._mode.elementwise + numpy_elementwise
            if "largest_numel" in self.quantities:
                self.report["largest_numel"] = int(self._mode.largest)
            if "peak_bytes" in self.quantities:
                if self._cuda:
                    import torch  # noqa: PLC0415

                    self.report["peak_bytes"] = int(torch.cuda.max_memory_allocated() - self._cuda_base)
                else:
                    self.report["peak_bytes"] = int(self._mode.peak)
        elif {"flops", "kv_flops", "largest_numel"} & self.quantities:
            _stop_numpy_counting()
            if "largest_numel" in self.quantities:
                self.report["largest_numel"] = int(COUNTER.largest)
            if not {"flops", "kv_flops"} & self.quantities:
                return None
            self.report["kv_flops"] = float(COUNTER.kv_flops)
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
