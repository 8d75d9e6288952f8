"""Diagnosis by replay: name a known mistake only when exactly one mutant of the bank reproduces it.

For a check that failed, the host takes the cases (plan steps) of that check and the mutants of the
exercise's mistake bank (``grader.judge.mistakes``), run in this process on the same inputs. A
mutant *explains* the check when

* on every case the candidate failed, the mutant's result reproduces the candidate's: the same
  structure, and every array (outputs and gradients) equal within the case's tolerance, or the same
  exception type when both raised (on a case whose reference raises, a check that the input is
  rejected, the judge asks only whether that exception type was raised: there the mutant
  reproduces the candidate when neither raised it, whatever else each did); and
* on every case of the check the candidate passed, the mutant passes too (its result is within
  tolerance of golden), so a mutant that would have failed where the candidate did not is excluded.

The check's message names the mistake only when exactly one mutant explains it; when several do, it
names none (a wrong named diagnosis sends the candidate after the wrong bug) and any hand-written
"Likely mistake" sentence of the check is removed as well, since the cases cannot tell those mistakes
apart. When none does, the check's own diagnosis (if any) stays.

Mutants are trusted host code (the exercise author's, like the reference) and never enter a sandbox.
Their answers are computed once per (exercise files, seed) and kept, like the reference's.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import types
import warnings
from collections import OrderedDict
from typing import Callable, Hashable, Iterable, TypeVar

import numpy as np

from grader.judge.compare import close_enough, rounded_to_float32
from grader.judge.judges import dtype_name
from grader.judge.mistakes import Mistake
from grader.judge.probes import fit_slope, judge_series, measured_groups, per_size, probe_paths
from grader.judge.verdicts import Verdict
from grader.judge.tolerance import DEFAULT_FACTOR, Tolerance, floor_for, tolerance_for
from grader.run.channel import RunResults, StepResult
from grader.run.plan import Plan
from grader.run.runner import PlanExecutor

_RUN_LOCK = threading.Lock()
_COUNTER = itertools.count()
_T = TypeVar("_T")


class _Recent:
    """The ``size`` most recently used answers by key, kept across gradings in this process (thread-safe).

    Not ``functools.lru_cache``: an answer is computed from a plan and a bank that are not part of
    its key (the key names the exercise files, seed and bank by content), and are not hashable.
    """

    def __init__(self, size: int) -> None:
        self._items: "OrderedDict[Hashable, object]" = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        """The kept answer of ``key``, or ``compute()``'s, kept (the least recently used beyond ``size``
        is dropped). ``compute`` runs outside the lock: a slow run never holds up another key's hit."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = compute()
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return value


#: every mutant's value answers, per (exercise files, seed, bank)
_ANSWERS = _Recent(8)
#: one mutant's measured answers on one probe, per (exercise files, seed, bank, check, mutant)
_COSTS = _Recent(8 * 16)


def import_mutant(mistake: Mistake) -> types.ModuleType:
    """A fresh module object holding the mutant's code (trusted: executed in this process)."""
    module = types.ModuleType(f"grader_mistake_{mistake.name}_{next(_COUNTER)}")
    module.__file__ = str(mistake.path)
    exec(compile(mistake.source, str(mistake.path), "exec"), module.__dict__)  # noqa: S102 - trusted bank
    return module


def value_steps(plan: Plan) -> list[str]:
    """Ids of the plan's steps that are not complexity measurements (the ones mutants replay)."""
    return [s.id for s in plan.steps if "measure" not in s.wire and not s.meta.get("probe")]


def _run_steps(mistake: Mistake, plan: Plan, steps: list[dict], lock=None) -> RunResults:
    """Run one mutant on the wire ``steps`` of ``plan`` in this process (no op audit), holding
    ``lock`` (if given) and this module's run lock. A mutant that fails to import gives results whose
    steps are all missing (it then explains nothing)."""
    wire = {**plan.wire(), "audit_ops": False, "steps": steps}
    results = RunResults(import_report={"ok": True, "exception": None})
    try:
        module = import_mutant(mistake)
    except Exception as exc:  # noqa: BLE001 - recorded; a broken mutant names nothing
        results.import_report = {"ok": False, "exception": {"type": type(exc).__name__, "message": str(exc)}}
        return results

    def emit(report: dict, out: dict[str, np.ndarray]) -> None:
        results.steps[report["id"]] = StepResult(report=report, arrays=out)

    with (lock or contextlib.nullcontext()), _RUN_LOCK, warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        PlanExecutor(wire, plan.arrays, module, module_file=str(mistake.path), use_alarm=False).run(emit)
    results.done = True
    return results


def run_mutant(mistake: Mistake, plan: Plan) -> RunResults:
    """Run one mutant on every value step of ``plan`` in this process (no measurements, no op audit).

    A mutant that fails to import gives results whose steps are all missing (it then explains nothing).
    """
    keep = set(value_steps(plan))
    return _run_steps(mistake, plan, [{k: v for k, v in s.items() if k != "measure"}
                                      for s in plan.wire()["steps"] if s["id"] in keep])


def _from_disk(disk, kind: str, mistake: Mistake, compute: Callable[[], RunResults]) -> RunResults:
    """``mistake``'s results for ``kind`` from the on-disk cache (``disk``: a
    ``reference_cache.MutantKeys``), else ``compute()``'s, stored there. Without ``disk``, ``compute()``."""
    if disk is None:
        return compute()
    from grader.grading import reference_cache
    hit = reference_cache.load_mutant(disk, kind, mistake)
    if hit is not None:
        return hit
    results = compute()
    reference_cache.store_mutant(disk, kind, mistake, results)
    return results


def mutant_answers(key: tuple, mistakes: Iterable[Mistake], plan: Plan, disk=None) -> dict[str, RunResults]:
    """Every mutant's results on ``plan``, computed once per ``key`` (exercise files and seed).

    Args:
        disk: a ``grader.grading.reference_cache.MutantKeys`` naming this exercise, seed and device:
            each mutant's results are then read from (or written to) the on-disk cache, so another
            process grading at the same seed runs no mutant (and imports no torch for them).
    """
    return _ANSWERS.get(key, lambda: {m.name: _from_disk(disk, "values", m, lambda m=m: run_mutant(m, plan))
                                      for m in mistakes})


# -- comparing two results of one step ------------------------------------------------------------

def _leaves(desc: dict | None, prefix: tuple = ()) -> list[tuple[tuple, dict]]:
    if not desc:
        return [(prefix, {"kind": "none"})]
    if desc.get("kind") == "tuple":
        return [leaf for i, item in enumerate(desc.get("items", [])) for leaf in _leaves(item, (*prefix, i))]
    return [(prefix, desc)]


#: ``tolerance_for`` of a case's (expected, golden) arrays, which a diagnosis asks for once per mutant:
#: keyed by the arrays' ids, each entry holding the arrays themselves so that no id is reused while it
#: is kept; emptied when full.
_TOLERANCES: dict[tuple, tuple] = {}
_TOLERANCES_MAX = 4096


def _tolerance(where: tuple, exp_leaves: dict, gold_leaves: dict, expected: StepResult, golden: StepResult,
               got_desc: dict) -> Tolerance:
    exp_desc, gold_desc = exp_leaves.get(where), gold_leaves.get(where)
    if exp_desc and gold_desc and exp_desc.get("kind") == "array" and gold_desc.get("kind") == "array":
        exp, gold, dtype = expected.arrays.get(exp_desc["key"]), golden.arrays[gold_desc["key"]], dtype_name(exp_desc)
        key = (id(exp), id(gold), dtype)
        kept = _TOLERANCES.get(key)
        if kept is not None and kept[0] is exp and kept[1] is gold:
            return kept[2]
        tol = tolerance_for(dtype, exp, gold, DEFAULT_FACTOR)
        if len(_TOLERANCES) >= _TOLERANCES_MAX:
            _TOLERANCES.clear()
        _TOLERANCES[key] = (exp, gold, tol)
        return tol
    try:
        rtol, atol = floor_for(dtype_name(got_desc))
    except ValueError:
        rtol, atol = 0.0, 0.0
    return Tolerance(rtol=rtol, atol=atol, dtype=dtype_name(got_desc))


def _widened(tol: Tolerance, dtype: str) -> Tolerance:
    """``tol`` widened to the floor of ``dtype`` when both results being compared were returned in that
    dtype and it is coarser than the case's: two programs that both compute in float32 agree only to
    float32 rounding, however precise the case's own dtype (float64 inputs) is."""
    try:
        rtol, atol = floor_for(dtype)
    except ValueError:
        return tol
    if rtol <= tol.rtol and atol <= tol.atol:
        return tol
    return Tolerance(rtol=max(rtol, tol.rtol), atol=max(atol, tol.atol), dtype=dtype,
                     baseline_error=tol.baseline_error, factor=tol.factor)


def _descs(result: StepResult) -> dict[tuple, dict]:
    leaves = dict(_leaves(result.report.get("output")))
    for label, desc in sorted((result.report.get("gradients") or {}).items()):
        leaves[("grad", label)] = desc
    return leaves


def _within_error_ratio(xa: np.ndarray, xb: np.ndarray, golden: StepResult, gold_desc: dict | None,
                        ratio: float, tol: Tolerance) -> bool:
    """Whether ``xa`` (the candidate's) is itself wrong (outside ``tol`` of the golden answer), wrong by at
    least ``1 / ratio`` of ``xb``'s (the mutant's) greatest distance from the golden answer, and as close
    to ``xb`` as ``ratio`` times that distance (a mistake defined only up to rounding at a lower
    precision; see ``grader.judge.mistakes``): an error of the mutant's size, not one far smaller."""
    if not gold_desc or gold_desc.get("kind") != "array":
        return False
    xg = golden.arrays.get(gold_desc["key"])
    if xg is None or xg.shape != xb.shape or not np.all(np.isfinite(xa)):
        return False
    xg = xg.astype(np.float64)
    if close_enough(xa, xg, tol):
        return False  # the candidate's values are right: whatever it failed, it is not this rounding
    own = float(np.max(np.abs(xb - xg), initial=0.0))
    if float(np.max(np.abs(xa - xg), initial=0.0)) * ratio < own:
        # an error far smaller than the mutant's is rounding of another kind, not the mutant's: a
        # float64 rotation written into a float32 buffer, or a float32 constant pi/2, is not a float32
        # angle table (confusers float32_output_buffer, cos_as_shifted_sin)
        return False
    if getattr(ratio, "float32_values", False) and not _float32_numbers(xa):
        # an error of float32's size with float64 values that are no float32 numbers: an epsilon of 1e-7
        # in a denominator, an approximate erf (helper hunt, issue 24), not float32 internals cast back
        return False
    if getattr(ratio, "float64_values", False) and _float32_numbers(xa):
        # every value a float32 number: a computation that ran wholly in float32 and was cast back, not
        # a float32 table multiplying float64 inputs (rope numpy's float32_internals mutant was also
        # explained by float32_cos_sin_for_float64, so neither was named)
        return False
    if getattr(ratio, "float32_values", False) and rounded_to_float32(xa, xg):
        # float32 numbers, but each the right answer rounded to float32 (to within one float32 step):
        # a float64 computation written into a float32 output buffer, or cast to float32 and back at
        # the end (helper hunt, issue 24), not a computation that ran in float32
        return False
    return float(np.max(np.abs(xa - xb), initial=0.0)) <= ratio * own


def _float32_numbers(x: np.ndarray) -> bool:
    """Whether every finite value of ``x`` (float64) is exactly a float32 number: the evidence of a result
    computed in float32 and cast back (``REPLAY_EVIDENCE = "float32_values"``)."""
    finite = x[np.isfinite(x)]
    return bool(np.array_equal(finite, finite.astype(np.float32).astype(np.float64)))


def _arrays_match(a: StepResult, b: StepResult, expected: StepResult, golden: StepResult, *,
                  strict: bool = True, error_ratio: float | None = None) -> bool:
    """Whether ``a`` reproduces ``b``: same structure, dtypes, kinds (NumPy array or torch.Tensor) and
    inputs modified in place, arrays within the case's tolerance (NaN where both have NaN counts as equal; two results returned in the
    same coarser dtype than the case's are compared at that dtype's floor). Without ``strict``, values
    only: dtypes and in-place modification are not compared (how the judges of values compare)."""
    la, lb = _descs(a), _descs(b)
    if la.keys() != lb.keys():
        return False
    le, lg = _descs(expected), _descs(golden)
    if strict and sorted(a.report.get("modified_inputs") or []) != sorted(b.report.get("modified_inputs") or []):
        return False
    for where, da in la.items():
        db = lb[where]
        if da.get("kind") != db.get("kind"):
            return False
        if da.get("kind") == "array":
            xa, xb = a.arrays.get(da["key"]), b.arrays.get(db["key"])
            if xa is None or xb is None or xa.shape != xb.shape or (strict and dtype_name(da) != dtype_name(db)):
                return False
            if strict and ("torch_dtype" in da) != ("torch_dtype" in db):
                return False  # a NumPy array and a torch.Tensor of the same values are different results
            xa, xb = xa.astype(np.float64), xb.astype(np.float64)
            both_nan = np.isnan(xa) & np.isnan(xb)  # the same NaN in both is the same result here
            xa, xb = np.where(both_nan, 0.0, xa), np.where(both_nan, 0.0, xb)
            tol = _tolerance(where, le, lg, expected, golden, da)
            if strict:
                tol = _widened(tol, dtype_name(da))
            if not close_enough(xa, xb, tol) and not (
                    error_ratio and _within_error_ratio(xa, xb, golden, lg.get(where), error_ratio, tol)):
                return False
        elif da.get("kind") == "scalar" and da.get("value") != db.get("value"):
            return False
    return True


#: The share of a mutant's clearly wrong elements on a case that the candidate must equal for the mutant's
#: mistake to explain some of the candidate's wrong values there (``_shares_a_wrong_value``).
SHARED_WRONG_FRACTION = 0.5


def _shares_a_wrong_value(a: StepResult, b: StepResult, expected: StepResult, golden: StepResult) -> bool:
    """Whether ``a`` (the candidate's) equals ``b`` (a mutant's), in some output, on at least
    ``SHARED_WRONG_FRACTION`` of the elements where ``b`` is clearly wrong, each within ten times the
    case's tolerance: the mutant's mistake explains some of
    the candidate's wrong values on this case, even where something else (a -1e30 fill instead of
    -inf, under a softmax over the query axis) changes the rest. No evidence either way, so True, where
    ``b`` is wrong by less than ten times the tolerance everywhere (two programs with one mistake
    round differently: early division on large scores is off by 8e-5 in six of 192 entries) or only
    where either is NaN or infinite (a degenerate result that programs repair differently: 0/0
    guarded to 0, or left NaN)."""
    la, lb, le, lg = _descs(a), _descs(b), _descs(expected), _descs(golden)
    evidence = False
    for where, da in la.items():
        db, dg = lb.get(where), lg.get(where)
        if not db or not dg or "array" != da.get("kind") or "array" != db.get("kind") or "array" != dg.get("kind"):
            continue
        xa, xb, xg = a.arrays.get(da["key"]), b.arrays.get(db["key"]), golden.arrays.get(dg["key"])
        if xa is None or xb is None or xg is None or not xa.shape == xb.shape == xg.shape:
            continue
        tol = _tolerance(where, le, lg, expected, golden, da)
        # two results returned in the same coarser dtype agree only to its rounding (as in _arrays_match)
        near = _widened(tol, dtype_name(da)) if dtype_name(da) == dtype_name(db) else tol
        xa, xb, xg = (x.astype(np.float64) for x in (xa, xb, xg))
        with np.errstate(invalid="ignore", over="ignore"):
            wrong = ~(np.abs(xb - xg) <= 10 * (tol.atol + tol.rtol * np.abs(xg))) & np.isfinite(xb) & np.isfinite(xa)
            same = np.abs(xa - xb) <= 10 * (near.atol + near.rtol * np.abs(xb))
        # a share of one output, not one element: positions counted from the first given one agree
        # with positions that restart at 0 on the first row only (0 both), and on no other wrong row
        # (confuser positions_relative_to_first); one output is enough (the weights of a softmax over
        # the query axis with a -1e30 fill are the mutant's, the output after a fully masked column not)
        n_wrong = int(np.count_nonzero(wrong))
        if n_wrong and np.count_nonzero(wrong & same) >= SHARED_WRONG_FRACTION * n_wrong:
            return True
        evidence = evidence or bool(n_wrong)
    return not evidence


def _raised(result: StepResult) -> str | None:
    """The exception type a step raised, or None when it returned."""
    if result.report.get("ok") and not result.report.get("exception"):
        return None
    return (result.report.get("exception") or {}).get("type")


def reproduces(candidate: StepResult | None, mutant: StepResult | None, expected: StepResult,
               golden: StepResult, error_ratio: float | None = None) -> bool:
    """Whether the mutant's result on one case is the candidate's (see the module docstring): where
    the reference raises, whether both raised that exception type or neither did."""
    if candidate is None or mutant is None:
        return False
    if not expected.report.get("ok") or expected.report.get("exception"):
        wanted = (expected.report.get("exception") or {}).get("type")
        if _raised(candidate) == "NotImplementedError":
            return False  # unfinished code (the stub), not a mistake
        return _raised(candidate) != wanted and _raised(mutant) != wanted or \
            _raised(candidate) == wanted and _raised(mutant) == wanted
    c_ok = bool(candidate.report.get("ok")) and not candidate.report.get("exception")
    m_ok = bool(mutant.report.get("ok")) and not mutant.report.get("exception")
    if not c_ok or not m_ok:
        return (not c_ok and not m_ok
                and (candidate.report.get("exception") or {}).get("type")
                == (mutant.report.get("exception") or {}).get("type"))
    return _arrays_match(candidate, mutant, expected, golden, error_ratio=error_ratio)


def passes(mutant: StepResult | None, expected: StepResult, golden: StepResult) -> bool:
    """Whether the mutant's result on one case equals the reference's golden answer within tolerance."""
    if mutant is None:
        return False
    e_ok = bool(expected.report.get("ok")) and not expected.report.get("exception")
    m_ok = bool(mutant.report.get("ok")) and not mutant.report.get("exception")
    if not e_ok:
        return not m_ok and ((mutant.report.get("exception") or {}).get("type")
                             == (expected.report.get("exception") or {}).get("type"))
    return m_ok and _arrays_match(mutant, golden, expected, golden, strict=False)


def explaining(failed: list[str], passed: list[str], candidate: dict[str, StepResult],
               mutants: dict[str, RunResults], expected: dict[str, StepResult],
               golden: dict[str, StepResult], error_ratios: dict[str, float] | None = None,
               reference: dict[str, StepResult] | None = None) -> list[str]:
    """Names of the mutants that explain a check: they reproduce the candidate on every ``failed``
    step and pass every ``passed`` step (step ids of one check). ``error_ratios``: the
    ``REPLAY_ERROR_RATIO`` of the mutants that declare one, by name (``grader.judge.mistakes``).
    ``expected`` sets each case's tolerance (as its judge did); ``reference`` (default ``expected``)
    is the reference's own result, which a mutant must not be on a failed case."""
    names = []
    for name, run in mutants.items():
        ratio = (error_ratios or {}).get(name)
        if all(reproduces(candidate.get(s), run.steps.get(s), expected[s], golden[s], ratio) for s in failed) and \
                all(passes(run.steps.get(s), expected[s], golden[s]) for s in passed) and \
                not any(_is_reference(run.steps.get(s), (reference or expected)[s], golden[s]) for s in failed):
            names.append(name)
    return names


def _is_reference(mutant: StepResult | None, expected: StepResult, golden: StepResult) -> bool:
    """Whether the mutant's result on a case is the reference's own (same structure, dtypes, kinds and
    in-place edits, values within tolerance): a mutant that behaves like the reference where the
    candidate failed does not explain that failure, even when the candidate's values are within
    tolerance of it (a judge that asks more than closeness: -inf entries exactly 0)."""
    if mutant is None or not expected.report.get("ok") or expected.report.get("exception"):
        return False
    if not mutant.report.get("ok") or mutant.report.get("exception"):
        return False
    return _arrays_match(mutant, expected, expected, golden)


def narrowed(names: list[str], passed_anywhere: list[str], all_steps: list[str],
             candidate: dict[str, StepResult], mutants: dict[str, RunResults],
             expected: dict[str, StepResult], golden: dict[str, StepResult],
             error_ratios: dict[str, float] | None = None) -> list[str]:
    """Of several mutants that explain one check, the one that reproduces the candidate on every value
    case of the plan (``all_steps``) when exactly one does; otherwise those that reproduce it on every
    case it passed anywhere in the plan (``passed_anywhere``: step ids of every check).

    A tie-break only: two mistakes can look alike on one check's cases (``use_cache=False`` that
    appends to the cache, and ``use_cache=False`` ignored altogether, leave the same cache) while one
    of them fails a case of another check that the candidate passed (the ignored flag also changes
    that call's output); that one is not the candidate's mistake. Reproducing the candidate, rather
    than passing against golden, keeps cases judged relative to the candidate's own earlier state (a
    cache left unchanged) meaningful. ``error_ratios``: as for ``explaining``.
    """
    def everywhere(steps: list[str]) -> list[str]:
        return [n for n in names
                if all(reproduces(candidate.get(s), mutants[n].steps.get(s), expected[s], golden[s],
                                  (error_ratios or {}).get(n)) for s in steps)]

    # first the mutant that is the candidate on every value case of the plan (a single mistake), then
    # those that are the candidate wherever it passed
    whole = everywhere(all_steps)
    return whole if len(whole) == 1 else everywhere(passed_anywhere)


def contradicted(name: str, failed_anywhere: list[str], candidate: dict[str, StepResult],
                 mutants: dict[str, RunResults], expected: dict[str, StepResult],
                 golden: dict[str, StepResult], passed_anywhere: list[str] = (),
                 error_ratio: float | None = None, right_in_same_function: list[str] = ()) -> bool:
    """Whether mutant ``name`` gets right a case the candidate got wrong in its values (``failed_anywhere``:
    the failed or errored value steps of every check): the mutant passes it, and the candidate's
    result is not the mutant's (values only; a wrong dtype or an input modified in place is another
    check's business). The candidate then has a mistake that this mutant does not make, so a check the
    mutant explains alone may be explained by that other mistake too (a mask that multiplies the
    scores looks like a -1e4 fill on scores around -1e5, and unlike it also fails every masked case):
    no name is better than a wrong name.

    Likewise where the mutant raises on a case the candidate passed (``passed_anywhere``) and the
    reference does not: a -1e9 fill gives an all -inf slice the same uniform weights as an exponent
    clamped at -80, but it also raises on float16, which the clamped solution passed. (A mutant whose
    values merely differ there may still be the candidate's mistake, written where a helper the
    candidate did not reuse carries it further.)

    And where both are wrong on a case and the candidate shares none of the mutant's wrong values
    there (``_shares_a_wrong_value``): a fixed base of 100 gives, at the default base 10000, exactly
    rope's base^(-i/d), and with base=500 neither the answer nor that mutant's on any element.
    ``error_ratio``: the mutant's, as for ``explaining`` (a mistake defined only up to rounding at a
    lower precision is the candidate's within that ratio).

    And where the mutant's values are wrong on a case of the same function (``right_in_same_function``:
    passed value steps of a function the candidate failed elsewhere) that the candidate got right, its
    values not the mutant's: the mistake is the candidate's on some calls only, so the mutant's sentence
    ("the axis argument is ignored: always the last axis") says more than the run shows (a softmax
    that ignores the axis of 3-D inputs only). Other functions are not counted: a mutant patching a
    helper two functions share may carry the mistake into one the candidate wrote apart."""
    run = mutants[name]
    for s in right_in_same_function:
        m, c = run.steps.get(s), candidate.get(s)
        if (m is None or c is None or _raised(m) is not None or _raised(expected[s]) is not None
                or not expected[s].report.get("ok")):
            continue
        if not passes(c, expected[s], golden[s]):
            continue  # passed by a check that judges something else (inputs left unchanged): no evidence
        if not passes(m, expected[s], golden[s]) and \
                not _arrays_match(c, m, expected[s], golden[s], strict=False, error_ratio=error_ratio):
            return True
    for s in passed_anywhere:
        m = run.steps.get(s)
        if (m is not None and _raised(m) is not None and expected[s].report.get("ok")
                and not expected[s].report.get("exception")):
            return True
    for s in failed_anywhere:
        m = run.steps.get(s)
        c = candidate.get(s)
        if not passes(m, expected[s], golden[s]):
            # both wrong here: the mutant must be wrong the candidate's way, at least in part
            if (c is not None and m is not None and _raised(expected[s]) is None and _raised(c) is None
                    and _raised(m) is None
                    and not _arrays_match(c, m, expected[s], golden[s], strict=False, error_ratio=error_ratio)
                    and not _shares_a_wrong_value(c, m, expected[s], golden[s])):
                return True
            continue
        ok = c is not None and bool(c.report.get("ok")) and not c.report.get("exception")
        if not expected[s].report.get("ok") or expected[s].report.get("exception"):
            if _raised(c) != _raised(m):
                return True  # the mutant rejects the bad input, the candidate does not (or otherwise)
            continue
        if not ok or not _arrays_match(c, m, expected[s], golden[s], strict=False):
            return True
    return False


# -- complexity checks: replaying measurements ---------------------------------------------------
#
# A failed probe check (``grader.judge.probes``) has no values to compare: what failed is a measured
# series (FLOPs, kv FLOPs or peak bytes at each swept size). Its diagnosis replays the probe's steps
# with their measurements, in this process, for each mutant of the bank whose ``Must fail:`` names the
# check, and names a mutant only when its series reproduces the candidate's on the larger half of the
# sweep (within ``COST_RTOL``, relative) with the same growth exponent there (fitted log-log slopes
# within ``COST_SLOPE_TOL``), and no other mutant does (``same_cost``). Timed series (the counting trail was lost) are never
# replayed: a clock cannot tell two mistakes apart.

#: Largest relative difference between the candidate's and a mutant's measured figure at one size
#: (counts are deterministic; peak bytes differ by allocator noise of a few hundred bytes).
COST_RTOL = 0.05
#: Largest difference between the fitted log-log slopes (growth exponents) of the two series.
COST_SLOPE_TOL = 0.1


def check_steps(plan: Plan, check: str) -> list[str]:
    """Ids of every step of ``check`` in plan order (for a probe: set-up steps and measured steps)."""
    return [s.id for s in plan.steps if s.check == check]


def run_mutant_measured(mistake: Mistake, plan: Plan, check: str, lock=None) -> RunResults:
    """Run one mutant on the steps of the complexity check ``check`` with their measurements
    (the probe's ``measure`` requests: FLOPs, kv FLOPs, peak bytes, seconds), in this process.

    Args:
        lock: held around the run (``grader.grading.grade._MEASURE_LOCK``): tracemalloc and the
            NumPy work counter are process-wide, so no other measured run may overlap.

    A mutant that fails to import gives results whose steps are all missing (it then explains nothing).
    """
    keep = set(check_steps(plan, check))
    return _run_steps(mistake, plan, [s for s in plan.wire()["steps"] if s["id"] in keep], lock)


def measured_answers(key: tuple, mistakes: Iterable[Mistake], plan: Plan, check: str,
                     lock=None, disk=None) -> dict[str, RunResults]:
    """Each of ``mistakes``' measured results on the steps of ``check``; each mutant is run once per
    ``key`` (exercise files, seed, bank and check) and kept, like ``mutant_answers``, whichever
    subset of the bank a later candidate asks for (``disk``: as ``mutant_answers``; only counted
    FLOPs and peak bytes are replayed, never a clock, so a kept series is as good as a fresh one)."""
    def compute(m: Mistake) -> RunResults:
        return _from_disk(disk, f"cost-{check}", m, lambda: run_mutant_measured(m, plan, check, lock))
    return {m.name: _COSTS.get((*key, m.name), lambda m=m: compute(m)) for m in mistakes}


def _measured(steps: dict[str, StepResult], quantity: str) -> Callable[[object], float | None]:
    """``quantity`` as measured by one plan step in ``steps``; None when the step is missing, raised or
    lost the counting trail (``trail_lost``)."""
    def value(step) -> float | None:
        got = steps.get(step.id)
        if got is None or not got.report.get("ok") or got.report.get("exception"):
            return None
        m = got.report.get("measure") or {}
        return None if m.get("trail_lost") or m.get(quantity) is None else float(m[quantity])

    return value


def measured_series(plan: Plan, steps: dict[str, StepResult], check: str,
                    quantity: str) -> tuple[list[int], list[float]] | None:
    """``(sizes, values)``: ``quantity`` summed over the measured steps of each swept size of the
    probe ``check`` (``grader.judge.probes.per_size``, as the probe's judge sums them), or None when a
    step is missing, raised, or lost the counting trail (``trail_lost``), or a value is not a positive
    finite number."""
    sizes, groups = measured_groups(plan, check)
    values = per_size(groups, _measured(steps, quantity))
    if not sizes or any(v is None or not (np.isfinite(v) and v > 0) for v in values):
        return None
    return sizes, values


def same_cost(sizes: list[int], candidate: list[float], mutant: list[float], *,
              rtol: float = COST_RTOL, slope_tol: float = COST_SLOPE_TOL) -> bool:
    """Whether a mutant's measured series reproduces the candidate's on the larger half of the sweep
    (at least its two largest sizes), where the term a complexity mistake adds dominates the fixed
    costs in which two right-in-value styles may differ (buffers, a pre-scaled copy of the query):
    at each of those sizes ``|c - m| <= rtol * max(c, m)``, and the growth exponents over them
    (fitted log-log slopes, ``grader.judge.probes.fit_slope``) differ by at most ``slope_tol``.

    Args:
        sizes: swept sizes, increasing; candidate / mutant: the measured quantity at each size
            (FLOPs, kv FLOPs or peak bytes).
    """
    if len(candidate) != len(mutant) or len(candidate) != len(sizes) or len(sizes) < 2:
        return False
    top = slice(min(len(sizes) // 2, len(sizes) - 2), None)
    sizes, candidate, mutant = list(sizes)[top], list(candidate)[top], list(mutant)[top]
    if any(abs(c - m) > rtol * max(abs(c), abs(m)) for c, m in zip(candidate, mutant)):
        return False
    return abs(fit_slope(sizes, candidate) - fit_slope(sizes, mutant)) <= slope_tol


def same_paths(plan: Plan, check: str, quantity: str, spec, candidate: dict[str, StepResult],
               mutant: dict[str, StepResult], expected: dict[str, StepResult]) -> bool:
    """Whether a mutant is wasteful on the same paths as the candidate, on a probe that measures
    several (``grader.judge.probes.probe_paths``): each path's own series, judged against the
    reference's as the probe judges it (``judge_series``), passes for both or fails for both. The
    sum's replay (``same_cost``) says how much; this says where, which a sum can hide: a decode step
    and a chunk that both re-project the values cost, summed, what a chunk alone that re-projects keys
    and values costs (kv_cache confuser ``values_reprojected_keys_cached``). Styles may differ in
    constant factors on a path (an extra L x L mask beside the scores), so a path is compared by its
    verdict, not its figures. True for a probe of one path."""
    sizes, groups = measured_groups(plan, check)
    paths = probe_paths(groups)
    if len(paths) < 2 or spec is None:
        return True
    for path in paths:
        got, theirs, ref = (_path_series(plan, check, quantity, s, path, groups) for s in (candidate, mutant, expected))
        if any(v is None or not np.isfinite(v) for v in got + theirs + ref) or not all(ref):
            return False
        if len({judge_series(spec, sizes, series, ref, quantity).verdict for series in (got, theirs)}) > 1:
            return False
    return True


def explaining_cost(plan: Plan, check: str, quantity: str, candidate: dict[str, StepResult],
                    mutants: dict[str, RunResults], expected: dict[str, StepResult] | None = None,
                    spec=None) -> list[str]:
    """Names of the mutants whose measured ``quantity`` series on the probe ``check`` reproduces the
    candidate's (``same_cost``), and, where the probe measures several paths and ``spec`` (its
    ``ProbeSpec``) and the reference's steps ``expected`` are given, on each path (``same_paths``);
    none when the candidate's own series is unusable."""
    got = measured_series(plan, candidate, check, quantity)
    if got is None:
        return []
    sizes, values = got
    names = []
    for name, run in mutants.items():
        theirs = measured_series(plan, run.steps, check, quantity)
        if theirs is not None and theirs[0] == sizes and same_cost(sizes, values, theirs[1]) and (
                expected is None or same_paths(plan, check, quantity, spec, candidate, run.steps, expected)):
            names.append(name)
    return names


def _path_series(plan: Plan, check: str, quantity: str, steps: dict[str, StepResult],
                 path: str, groups: list | None = None) -> list[float | None]:
    """``quantity`` summed over the measured steps of one ``path`` of the probe ``check``, per size
    (``groups``: ``measured_groups(plan, check)[1]`` when the caller has them already)."""
    if groups is None:
        _sizes, groups = measured_groups(plan, check)
    return per_size([[s for s in g if s.meta.get("path", "") == path] for g in groups], _measured(steps, quantity))


def explaining_cost_on_paths(plan: Plan, check: str, quantity: str, candidate: dict[str, StepResult],
                             mutants: dict[str, RunResults], expected: dict[str, StepResult],
                             spec) -> tuple[list[str], list[str]]:
    """``(names, paths)`` for a candidate wasteful on some paths of a probe only, which no mutant
    reproduces as a whole (``explaining_cost`` found none): ``paths`` are the paths whose own series
    fails the probe's judge against the reference's (``judge_series``), and ``names`` the mutants
    whose series on each of those paths reproduces the candidate's there (``same_cost``). A mutant
    wasteful on every path explains a candidate wasteful only for a batch, only when causal, or only
    with several KV heads (helper hunt, issue 24) on the paths where the candidate is wasteful, which
    is what the name then claims; on the other paths the candidate's cost is right and the mutant's is
    not compared.

    Returns ``([], [])`` when the probe measures one path, the candidate's series on a path is
    unusable, or its cost fails on no path or on every path (a whole-probe mistake is
    ``explaining_cost``'s to name).

    Args:
        spec: the probe's ``ProbeSpec`` (its ratio bounds judge each path); None gives ``([], [])``.
    """
    sizes, groups = measured_groups(plan, check)
    paths = probe_paths(groups)
    if len(paths) < 2 or spec is None or len(sizes) < 2:
        return [], []
    failing, mine = [], {}
    for path in paths:
        got, ref = (_path_series(plan, check, quantity, s, path, groups) for s in (candidate, expected))
        if any(v is None or not np.isfinite(v) or v <= 0 for v in got + ref):
            return [], []
        if judge_series(spec, sizes, got, ref, quantity).verdict == Verdict.FAILED:
            failing.append(path)
            mine[path] = got
    if not failing or len(failing) == len(paths):
        return [], []
    names = []
    for name, run in mutants.items():
        ok = True
        for path in failing:
            got, theirs = mine[path], _path_series(plan, check, quantity, run.steps, path, groups)
            if any(v is None or not np.isfinite(v) or v <= 0 for v in theirs) or not same_cost(sizes, got, theirs):
                ok = False
                break
        if ok:
            names.append(name)
    return names, failing
