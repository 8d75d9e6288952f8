"""The bank of named mistakes (grader/judge/mistakes.py) and diagnosis by replay (grader/grading/diagnosis.py)."""
import itertools
import tempfile
from pathlib import Path

import numpy as np
import pytest

from grader.grading import diagnosis
from grader.grading.exercise import exercise_ids, get_exercise
from grader.grading.grade import _MEASURE_LOCK, answers_for, build_plan, grade_submission
from grader.grading.trusted import TrustedInProcess
from grader.judge.mistakes import MistakeInvalid, apply_patch, load_mistake
from mutant_helpers import mutant_file

BANKED_TRACKS = [(i, t) for i in exercise_ids() for t in get_exercise(i).tracks
                 if get_exercise(i, track=t).mistakes]  # every track's bank (mistakes_<track>/ included)


def _grade_mutant(exercise, name, seed):
    mistake = next(m for m in exercise.mistakes if m.name == name)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.py"
        path.write_text(mistake.source, encoding="utf-8")
        return grade_submission(exercise, path, seed=seed, trusted_runner=TrustedInProcess(name, _MEASURE_LOCK))


def test_patch_must_match_exactly_once(tmp_path):
    assert apply_patch("a = 1\nb = 2\n", [("b = 2", "b = 3")]) == "a = 1\nb = 3\n"
    with pytest.raises(MistakeInvalid, match="occurs 0 times"):
        apply_patch("a = 1\n", [("b = 2", "b = 3")])
    with pytest.raises(MistakeInvalid, match="occurs 2 times"):
        apply_patch("a = 1\na = 1\n", [("a = 1", "a = 2")])
    bad = tmp_path / "no_doc.py"
    bad.write_text("PATCH = [('x', 'y')]\n")
    with pytest.raises(MistakeInvalid, match="Must fail"):
        load_mistake(bad, tmp_path / "ref.py")


def test_a_patch_with_a_base_applies_to_that_mistake_not_the_reference(tmp_path):
    ref = tmp_path / "ref.py"
    ref.write_text("def f(x):\n    return x + 1\n")
    (tmp_path / "whole.py").write_text('"""returns twice x.\n\nMust fail: values\n"""\ndef f(x):\n    return 2 * x\n')
    (tmp_path / "edit.py").write_text('"""returns three times x.\n\nMust fail: values\n"""\n'
                                      'BASE = "whole"\nPATCH = [("2 * x", "3 * x")]\n')
    assert load_mistake(tmp_path / "edit.py", ref).source.endswith("return 3 * x\n")
    (tmp_path / "loop.py").write_text('"""x.\n\nMust fail: values\n"""\nBASE = "loop"\nPATCH = [("a", "b")]\n')
    with pytest.raises(MistakeInvalid, match="another mistake file"):
        load_mistake(tmp_path / "loop.py", ref)
    (tmp_path / "a.py").write_text('"""x.\n\nMust fail: values\n"""\nBASE = "b"\nPATCH = [("a", "b")]\n')
    (tmp_path / "b.py").write_text('"""x.\n\nMust fail: values\n"""\nBASE = "a"\nPATCH = [("a", "b")]\n')
    with pytest.raises(MistakeInvalid, match="leads back"):
        load_mistake(tmp_path / "a.py", ref)


@pytest.mark.parametrize("exercise_id, track", BANKED_TRACKS)
def test_every_pair_of_value_mutants_differs_on_some_case(exercise_id, track):
    """A diagnosis names a mutant only when no other one reproduces the same results: on the plan's
    cases, every two mutants whose values differ from the reference must also differ from each other
    (in every track: the torch banks are separate files)."""
    exercise = get_exercise(exercise_id, track=track)
    plan = build_plan(exercise, 7)
    expected, golden, _, _ = answers_for(exercise, 7, plan)
    runs = {m.name: diagnosis.run_mutant(m, plan) for m in exercise.mistakes}
    steps = diagnosis.value_steps(plan)
    wrong = {n for n, r in runs.items()
             if not all(diagnosis.passes(r.steps.get(s), expected.steps[s], golden.steps[s]) for s in steps)}
    assert len(wrong) >= 3
    same = [(a, b) for a, b in itertools.combinations(sorted(wrong), 2)
            if all(diagnosis.reproduces(runs[a].steps.get(s), runs[b].steps.get(s), expected.steps[s], golden.steps[s])
                   for s in steps)]
    assert not same


@pytest.mark.parametrize("exercise_id, name, other", [
    ("mha", "logits_divided_by_d_k", "scaled_by_sqrt_d_model"),
    ("kv_cache", "logits_divided_by_d_k", "scaled_by_sqrt_d_model"),
    ("attention_scores", "logits_divided_by_d_k", "unscaled"),
    ("causal_mask", "combined_pads_query_axis", "combined_or"),
])
def test_a_mutant_is_diagnosed_as_itself_and_never_as_its_look_alike(exercise_id, name, other):
    card = _grade_mutant(get_exercise(exercise_id), name, seed=3)
    named = {c.details.get("mistake") for c in card.checks if c.details.get("mistake")}
    assert named == {name}
    failed = [c for c in card.checks if c.verdict == "failed" and c.details.get("mistake")]
    assert failed and all(c.message.startswith("Likely mistake: ") for c in failed)
    assert all(other not in c.message for c in card.checks)


@pytest.mark.parametrize("name, other_sentence", [
    ("logits_scaled_by_sqrt_d_model", "divided by d_k instead of sqrt(d_k)"),
    ("logits_divided_by_d_k", "scaled by 1/sqrt(D) (the model width)"),
])
def test_gqa_sqrt_d_model_and_d_k_scales_are_never_named_for_each_other(name, other_sentence):
    """gqa: at D=16, num_query_heads=4 (d_k = 4 = sqrt(16)) a 1/sqrt(D) scale and a 1/d_k scale give
    the same scores; with no sqrt(D) mutant in the bank, a 1/sqrt(D) solution was told it divided by
    d_k on fully_masked_rows, half_precision and grad_weights. Both mutants now explain those checks,
    so nothing is named there, and each is named as itself where the shapes tell them apart."""
    exercise = get_exercise("gqa")
    assert 1.0 / np.sqrt(16) == 1.0 / (16 // 4)   # the coincidence on those cases' shapes
    card = _grade_mutant(exercise, name, seed=2)
    assert {c.details.get("mistake") for c in card.checks if c.details.get("mistake")} == {name}
    assert not any(other_sentence in c.message for c in card.checks)
    assert card.score < card.max_score


def test_the_d_k_mistake_is_not_blamed_on_sqrt_d_model_where_the_two_coincide():
    """At D=16, d_k=4 (4 == sqrt(16)) dividing by d_k and by sqrt(D) give the same scores: the old
    hand-written hint said "1/sqrt(D)"; the bank names d_k because other cases tell them apart."""
    card = _grade_mutant(get_exercise("mha"), "logits_divided_by_d_k", seed=1)
    assert not any("sqrt(D)" in c.message for c in card.checks)


@pytest.mark.parametrize("exercise_id", ["softmax", "attention_scores"])
def test_correct_files_get_no_diagnosis(exercise_id):
    exercise = get_exercise(exercise_id)
    for path in [exercise.reference_path, *sorted(exercise.samples_path.glob("correct_*.py"))]:
        card = grade_submission(exercise, path, seed=5, trusted_runner=TrustedInProcess(path.name, _MEASURE_LOCK))
        assert card.all_passed, path
        assert not any(c.details.get("mistake") for c in card.checks), path


@pytest.mark.parametrize("exercise_id, name", [
    ("softmax", "no_max_subtraction"),        # was 11 or 13 of 16 depending on the seed
    ("softmax", "global_max"),                # was 11 or 13 of 16
    ("attention_scores", "no_max_subtraction"),  # was 17 or 19 of 20
    ("attention_scores", "finite_mask_fill"),    # fully masked rows given uniform weights: 17 or 19
    ("causal_mask", "combined_pads_query_axis"),  # a combined mask that pads the query axis: 13 or 15 of 17
])
def test_the_five_seed_dependent_wrong_solutions_score_the_same_at_every_seed(exercise_id, name):
    exercise = get_exercise(exercise_id)
    cards = [_grade_mutant(exercise, name, seed) for seed in range(1, 7)]
    scores = {c.score for c in cards}
    assert len(scores) == 1, scores
    assert cards[0].score < cards[0].max_score
    hidden = [c for c in cards[0].checks if c.visibility == "hidden"]
    assert all(c.verdict == "failed" for c in hidden)  # the hidden check always holds the case that shows it


@pytest.mark.parametrize("exercise_id, sample", [
    ("softmax", "bug_returns_float64.py"),
    ("softmax", "bug_inplace.py"),
])
def test_one_mistake_one_deduction(exercise_id, sample):
    """A right answer in the wrong dtype fails dtype_preserved only; an in-place edit input_unchanged only."""
    exercise = get_exercise(exercise_id)
    path = exercise.samples_path / sample
    card = grade_submission(exercise, path, seed=2, trusted_runner=TrustedInProcess(sample, _MEASURE_LOCK))
    failed = [c.id for c in card.checks if c.verdict != "passed"]
    assert failed == (["dtype_preserved"] if "float64" in sample else ["input_unchanged"])


@pytest.mark.parametrize("exercise_id, files", [
    ("softmax", ["correct_logsumexp.py", "bug_naive_exp.py", "bug_inplace.py"]),
    ("attention_scores", ["correct_einsum.py", "mistake:mask_polarity_inverted"]),
])
def test_warm_path_gives_the_sandbox_results(exercise_id, files, tmp_path):
    """The in-process path for trusted files returns what the process sandbox returns: same status,
    score, verdicts, and the same output arrays for every value step (``mistake:NAME``: the bank's
    mutant, written to a file)."""
    exercise = get_exercise(exercise_id)
    for name in files:
        path = (mutant_file(exercise_id, name.removeprefix("mistake:"), tmp_path) if name.startswith("mistake:")
                else exercise.samples_path / name)
        warm = grade_submission(exercise, path, seed=11, trusted_runner=TrustedInProcess(name, _MEASURE_LOCK))
        cold = grade_submission(exercise, path, seed=11, sandbox="process")
        assert warm.sandbox["backend"] == "in-process" and cold.sandbox["backend"] == "process"
        assert (warm.status, warm.score) == (cold.status, cold.score), name
        assert [(c.id, c.verdict, c.details.get("mistake")) for c in warm.checks] == \
            [(c.id, c.verdict, c.details.get("mistake")) for c in cold.checks], name
    plan = build_plan(exercise, 11)
    from grader.sandbox.base import SandboxJob  # noqa: PLC0415
    from grader.sandbox.process import ProcessSandbox  # noqa: PLC0415

    job = SandboxJob(plan=plan.wire(), arrays=plan.arrays, submission=(exercise.samples_path / files[0]).read_bytes())
    warm_run = TrustedInProcess("x", _MEASURE_LOCK).run(job, exercise.limits).results
    cold_run = ProcessSandbox().run(job, exercise.limits).results
    for sid in diagnosis.value_steps(plan):
        w, c = warm_run.steps[sid], cold_run.steps[sid]
        assert w.report["output"] == c.report["output"], sid
        assert w.arrays.keys() == c.arrays.keys()
        for key in w.arrays:
            np.testing.assert_array_equal(w.arrays[key], c.arrays[key])


@pytest.mark.parametrize("exercise_id, track, sample, name", [
    # returns an output for one bad group and raises RuntimeError for the other, where the mutant raises
    # RuntimeError for both: bad_group asks only "was ValueError raised", so they are the same mistake
    ("gqa", "torch", "bug_no_group_check.py", "no_group_check"),
    # float32 angles formed another way (torch.arange(...).float(), exp(-log(10000) * 2i / d)): they differ
    # from the mutant's float32 angles by as much as either differs from the reference
    ("positional_encoding", "torch", "bug_float32_angles.py", "float32_angles"),
    ("rope", "torch", "bug_float32_table_for_float64.py", "float32_table_for_float64"),
    # NumPy: np.cos of its float32 angles is float32 too, so on a case whose angles float32 holds
    # exactly (d = 2, small positions) only the cos/sin mutant is wrong with it; the angles-only mutant is
    # right there, and replay named nothing at the seeds that drew such a hidden case
    ("rope", "numpy", "bug_float32_table_for_float64.py", "float32_cos_sin_for_float64"),
    # right values returned as a NumPy array: the float32-rounding rule never names a right-valued answer
    ("positional_encoding", "torch", "bug_returns_numpy.py", "returns_numpy"),
])
def test_a_sample_is_named_by_its_mistake_where_it_differs_from_the_mutant_only_as_the_contract_allows(
        exercise_id, track, sample, name):
    exercise = get_exercise(exercise_id, track=track)
    path = exercise.samples_path / sample
    card = grade_submission(exercise, path, seed=4, trusted_runner=TrustedInProcess(sample, _MEASURE_LOCK))
    assert card.score < card.max_score
    assert {c.details.get("mistake") for c in card.checks if c.details.get("mistake")} == {name}


@pytest.mark.parametrize("exercise_id", ["gqa", "rope", "transformer_block"])
def test_the_stub_is_not_diagnosed_as_a_missing_value_error(exercise_id):
    """The stub raises NotImplementedError everywhere: unfinished code, not 'no ValueError raised'."""
    exercise = get_exercise(exercise_id)
    card = grade_submission(exercise, exercise.stub_path, seed=4,
                            trusted_runner=TrustedInProcess("stub.py", _MEASURE_LOCK))
    assert card.score == 0
    assert not any(c.details.get("mistake") for c in card.checks)


def _float32_internals(exercise):
    """The bank's mutant that computes float64 input in float32 and casts the result back (kv_cache's
    torch bank and softmax's NumPy one call it computed_in_float32, the result cast back), or None."""
    bank = {m.name: m for m in exercise.mistakes}
    if "float32_internals" in bank:
        return bank["float32_internals"]
    other = bank.get("computed_in_float32")
    return other if other is not None and other.must_fail == ("float64",) else None


FLOAT32_INTERNALS = [(i, t) for i, t in BANKED_TRACKS if _float32_internals(get_exercise(i, track=t))]


def test_every_exercise_with_a_float64_check_banks_float32_internals():
    with_float64 = {(i, t) for i, t in BANKED_TRACKS if "float64" in {c.id for c in get_exercise(i, track=t).checks}}
    assert len(with_float64) == 20 and set(FLOAT32_INTERNALS) == with_float64


@pytest.mark.parametrize("exercise_id, track", FLOAT32_INTERNALS)
def test_float64_computed_in_float32_fails_the_float64_check_only(exercise_id, track):
    """One mistake, one deduction (issue 15): float64 input computed in float32 and cast back was
    charged on every check holding a float64 case (gqa lost 14 of 26 points). Float64 cases outside
    the `float64` check are now judged at float32 tolerance, so the mutant fails that check alone
    (softmax also `dtype_max`: logits near float64's largest value overflow float32 to inf, NaN out),
    and is named as itself."""
    exercise = get_exercise(exercise_id, track=track)
    mistake = _float32_internals(exercise)
    expected = {"float64", "dtype_max"} if exercise_id == "softmax" else {"float64"}
    assert "float64" in mistake.must_fail and set(mistake.must_fail) <= expected
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{mistake.name}.py"
        path.write_text(mistake.source, encoding="utf-8")
        card = grade_submission(exercise, path, seed=2, trusted_runner=TrustedInProcess(path.name, _MEASURE_LOCK))
    failed = {c.id for c in card.checks if c.verdict != "passed"}
    assert failed == expected
    f64 = next(c for c in card.checks if c.id == "float64")
    assert f64.verdict == "failed" and "not close" in f64.message
    named = {c.details.get("mistake") for c in card.checks if c.details.get("mistake")}
    assert named <= {mistake.name}
    if exercise_id != "rope":  # rope: float32_table_for_float64 explains it too, so neither is named
        assert named == {mistake.name}


BASELINES = [(i, t, p.name) for i in exercise_ids() for t in get_exercise(i).tracks
             for p in get_exercise(i, track=t).baseline_paths]


@pytest.mark.parametrize("exercise_id, track, name", BASELINES)
def test_every_baseline_is_graded_full_marks(exercise_id, track, name):
    """A baseline sets tolerances as a correct plain implementation; graded as a submission, it must be
    one (softmax's torch logsumexp baseline had a NaN gradient on all -inf slices, diagnosed as a mistake)."""
    exercise = get_exercise(exercise_id, track=track)
    path = next(p for p in exercise.baseline_paths if p.name == name)
    card = grade_submission(exercise, path, seed=2, trusted_runner=TrustedInProcess(name, _MEASURE_LOCK))
    assert card.all_passed, [(c.id, c.message.splitlines()[0]) for c in card.checks if c.verdict != "passed"]
    assert not any(c.details.get("mistake") for c in card.checks)


def test_a_gradient_is_judged_given_a_right_forward(tmp_path):
    """One mistake, one deduction: NaN in an all -inf slice's forward output makes its gradient NaN
    too; the gradient case is skipped without charge (the value check charges the forward), while a
    right forward with a NaN gradient still fails `gradients` with its own diagnosis. A finite wrong
    forward is not excused (how far off it is varies by case, so the verdict would vary by seed)."""
    exercise = get_exercise("softmax", track="torch")
    cards = {}
    for name in ("nan_all_neg_inf", "nan_gradient_all_neg_inf"):
        path = mutant_file("softmax", name, tmp_path, track="torch")
        cards[name] = grade_submission(exercise, path, seed=2, trusted_runner=TrustedInProcess(name, _MEASURE_LOCK))
    forward_wrong = {c.id: c for c in cards["nan_all_neg_inf"].checks}
    assert {c.id for c in cards["nan_all_neg_inf"].checks if c.deducted} == {"all_neg_inf"}
    grads = forward_wrong["gradients"]
    assert grads.verdict == "skipped" and grads.points == grads.max_points
    assert grads.message.startswith("Gradient not judged: the forward output of this case is NaN or inf")
    assert grads.details["forward"]["nan_count"] > 0
    backward_wrong = {c.id: c for c in cards["nan_gradient_all_neg_inf"].checks}
    assert {c.id for c in cards["nan_gradient_all_neg_inf"].checks if c.deducted} == {"gradients"}
    assert backward_wrong["gradients"].verdict == "failed" and backward_wrong["gradients"].details["nonfinite"] > 0


@pytest.mark.parametrize("exercise_id, track, name, deducted", [
    # the dtype of half input is dtype_preserved's alone (half_precision judged it too)
    ("softmax", "torch", "computes_in_float32", {"float64", "dtype_max", "dtype_preserved"}),
    # float64 and half_precision hold no causal case: a causal mistake is the causal checks' (and the
    # gradient checks', whose causal cases differentiate the wrong function)
    ("flash_attention", "torch", "causal_top_left", {"causal_bottom_right", "gradients", "hidden_values",
                                                     "hidden_gradients"}),
    ("flash_attention", "numpy", "causal_block_short", {"causal", "causal_bottom_right", "large_scores", "hidden_values"}),
    # the calls that fill a cache before a gradient case are set-up, not value cases of `gradients`
    # (a wrong scale is a wrong function: its finite gradient is judged, and wrong, on the prefill case)
    ("kv_cache", "torch", "logits_divided_by_d_k",
     {"prefill_decode", "chunked_prefill", "no_cache_output", "no_cache_state", "cache_contents", "long_sequence",
      "clear_cache", "batch", "float64", "hidden_sequences", "gradients"}),
    # an in-place rotation that returns the rotated result keeps the right gradient
    ("rope", "torch", "rotated_in_place", {"input_unchanged"}),
])
def test_a_narrow_mistake_costs_only_the_checks_about_it(exercise_id, track, name, deducted, tmp_path):
    exercise = get_exercise(exercise_id, track=track)
    path = mutant_file(exercise_id, name, tmp_path, track=track)
    card = grade_submission(exercise, path, seed=2, trusted_runner=TrustedInProcess(name, _MEASURE_LOCK))
    assert {c.id for c in card.checks if c.deducted} == deducted
    assert {c.details.get("mistake") for c in card.checks if c.details.get("mistake")} == {name}


@pytest.mark.parametrize("extra, error", [
    ('REPLAY_ERROR_RATIO = 10.0\nREPLAY_EVIDENCE = "float32_values"\n', None),
    ('REPLAY_ERROR_RATIO = 10.0\nREPLAY_EVIDENCE = "float64_values"\n', None),
    ('REPLAY_EVIDENCE = "float32_values"\n', "needs a REPLAY_ERROR_RATIO"),
    ('REPLAY_ERROR_RATIO = 10.0\nREPLAY_EVIDENCE = "bfloat16"\n', "must be one of float32_values"),
])
def test_replay_evidence_is_read_with_its_ratio(extra, error, tmp_path):
    reference = tmp_path / "ref.py"
    reference.write_text("def f(x):\n    return x\n")
    path = tmp_path / "m.py"
    path.write_text('"""wrong.\n\nMust fail: values\n"""\nPATCH = [("return x", "return -x")]\n' + extra)
    if error:
        with pytest.raises(MistakeInvalid, match=error):
            load_mistake(path, reference)
    else:
        ratio = load_mistake(path, reference).error_ratio
        wanted = extra.split('"')[1]  # the evidence named, and only it, is asked for
        assert ratio == 10.0 and getattr(ratio, wanted)
        assert not getattr(ratio, {"float32_values": "float64_values", "float64_values": "float32_values"}[wanted])


def test_float32_numbers_is_the_evidence_of_a_result_cast_back():
    x = np.random.default_rng(0).standard_normal(50)
    assert diagnosis._float32_numbers(x.astype(np.float32).astype(np.float64))
    assert not diagnosis._float32_numbers(x / (1 + 1e-7))
    assert diagnosis._float32_numbers(np.array([np.inf, np.nan, 0.5]))
