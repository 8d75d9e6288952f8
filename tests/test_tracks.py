"""Tracks: a NumPy and a PyTorch version of one exercise (``[tracks.<t>]`` in exercise.toml, files
named after the track, ``--track`` on the CLI, the track in the scorecard, batch detection by imports).
"""

from __future__ import annotations

import importlib.util
import json
import re
import textwrap
from pathlib import Path

import jsonschema
import numpy as np
import pytest
import torch
from click.testing import CliRunner

from grader.cli import main
from grader.cohort.batch import BatchItem, discover, is_current
from grader.grading.exercise import (SCHEMA_DIR, ExerciseInvalid, exercise_ids, UnknownExercise, UnknownTrack, get_exercise,
                                     imported_track, load_exercise, track_for_file)

from tests.conftest import verdicts

ROOT = Path(__file__).resolve().parent.parent

TOML = '''
id = "toy"
title = "Toy (NumPy)"
version = "1.0.0"
framework = "numpy"
entry_points = ["f"]

[limits]
wall_seconds = 30
cpu_seconds = 30

[api]
forbidden_modules = ["torch", "scipy"]

[[checks]]
id = "values"
title = "values"
category = "correctness"
points = 2

[[checks]]
id = "speed"
title = "speed"
category = "correctness"
points = 1

[tracks.torch]
title = "Toy (PyTorch)"

[tracks.torch.limits]
cpu_seconds = 90

[tracks.torch.api]
forbidden_names = ["torch.softmax"]

[[tracks.torch.checks]]
id = "values"
title = "values of tensors"
category = "correctness"
points = 3

[[tracks.torch.checks]]
id = "gradients"
title = "gradients"
category = "gradient"
points = 4
'''


def make_toy(root: Path, toml: str = TOML, checks_py: str = "def build_plan(public_seed, hidden_seed, track='numpy'):\n    return track\n",
             torch_files: bool = True) -> Path:
    folder = root / "exercises" / "toy"
    folder.mkdir(parents=True)
    (folder / "exercise.toml").write_text(toml)
    (folder / "spec.md").write_text("# toy\n")
    (folder / "stub.py").write_text("import numpy as np\n")
    (folder / "checks.py").write_text(checks_py)
    (root / "reference").mkdir()
    (root / "reference" / "toy.py").write_text("import numpy as np\n")
    if torch_files:
        (folder / "stub_torch.py").write_text("import torch\n")
        (root / "reference" / "toy_torch.py").write_text("import torch\n")
    return folder


def test_default_track_is_the_framework_and_keeps_its_files(tmp_path):
    make_toy(tmp_path)
    ex = get_exercise("toy", tmp_path)
    assert (ex.track, ex.tracks, ex.is_default_track) == ("numpy", ("numpy", "torch"), True)
    assert ex.stub_path.name == "stub.py" and ex.reference_path.name == "toy.py"
    assert ex.samples_path == tmp_path / "submissions" / "samples" / "toy"
    assert ex.baseline_paths == [] and ex.title == "Toy (NumPy)"
    assert [c.id for c in ex.checks] == ["values", "speed"] and ex.forbidden_modules == ("torch", "scipy")
    assert ex.build_plan(0, 1) == "numpy"


def test_other_track_overlays_title_limits_api_and_checks(tmp_path):
    folder = make_toy(tmp_path)
    (folder / "baselines_torch").mkdir()
    (folder / "baselines_torch" / "plain.py").write_text("import torch\n")
    ex = get_exercise("toy", tmp_path, track="torch")
    assert ex.track == "torch" and not ex.is_default_track and ex.title == "Toy (PyTorch)"
    assert ex.stub_path == folder / "stub_torch.py"
    assert ex.reference_path == tmp_path / "reference" / "toy_torch.py"
    assert ex.samples_path == tmp_path / "submissions" / "samples" / "toy" / "torch"
    assert [p.name for p in ex.baseline_paths] == ["plain.py"]
    # limits merge key by key; api is replaced as a whole (torch is no longer forbidden)
    assert (ex.limits.cpu_seconds, ex.limits.wall_seconds) == (90, 30)
    assert ex.forbidden_modules == () and ex.forbidden_names == ("torch.softmax",)
    # a check with a default id replaces it in place; a new one is appended
    assert [(c.id, c.points) for c in ex.checks] == [("values", 3.0), ("speed", 1.0), ("gradients", 4.0)]
    assert ex.max_score == 8.0
    assert ex.build_plan(0, 1) == "torch"


def test_drop_checks_removes_a_default_check_and_names_unknown_ones(tmp_path):
    make_toy(tmp_path)
    text = TOML.replace('[tracks.torch]\ntitle = "Toy (PyTorch)"',
                        '[tracks.torch]\ntitle = "Toy (PyTorch)"\ndrop_checks = ["speed"]')
    (tmp_path / "exercises" / "toy" / "exercise.toml").write_text(text)
    assert [c.id for c in get_exercise("toy", tmp_path, track="torch").checks] == ["values", "gradients"]
    (tmp_path / "exercises" / "toy" / "exercise.toml").write_text(text.replace('["speed"]', '["nope"]'))
    with pytest.raises(ExerciseInvalid, match="drop_checks names unknown checks"):
        get_exercise("toy", tmp_path, track="torch")


def test_unknown_track_lists_the_tracks(tmp_path):
    make_toy(tmp_path, TOML.split("[tracks.torch]")[0])
    with pytest.raises(UnknownTrack, match=r"no 'torch' track \(tracks: numpy\)") as info:
        get_exercise("toy", tmp_path, track="torch")
    assert isinstance(info.value, UnknownExercise)  # the CLI's usage-error path catches both


def test_a_table_for_the_default_track_is_refused(tmp_path):
    make_toy(tmp_path, TOML + '\n[tracks.numpy]\ntitle = "again"\n')
    with pytest.raises(ExerciseInvalid, match=r"\[tracks.numpy\] describes the default track"):
        get_exercise("toy", tmp_path)


def test_missing_files_of_the_other_track_are_named(tmp_path):
    make_toy(tmp_path, torch_files=False)
    get_exercise("toy", tmp_path)  # the default track is complete
    with pytest.raises(ExerciseInvalid, match=r"toy \(torch track\) is missing .*stub_torch.py"):
        get_exercise("toy", tmp_path, track="torch")


def test_build_plan_without_track_parameter_serves_only_the_default_track(tmp_path):
    make_toy(tmp_path, checks_py="def build_plan(public_seed, hidden_seed):\n    return 'one'\n")
    assert get_exercise("toy", tmp_path).build_plan(0, 1) == "one"
    with pytest.raises(ExerciseInvalid, match="takes no 'track' argument"):
        get_exercise("toy", tmp_path, track="torch").build_plan(0, 1)


def test_unknown_keys_in_a_track_table_fail_the_schema(tmp_path):
    make_toy(tmp_path, TOML + '\n[tracks.torch.limits2]\nx = 1\n')
    with pytest.raises(ExerciseInvalid, match="limits2"):
        load_exercise(tmp_path / "exercises" / "toy")


@pytest.mark.parametrize("source, track", [
    ("import torch\n", "torch"),
    ("import torch.nn.functional as F\nimport numpy as np\n", "torch"),
    ("from torch import nn\n", "torch"),
    ("def f():\n    import torch\n", "torch"),
    ("import numpy as np\n", "numpy"),
    ("from numpy.linalg import norm\n", "numpy"),
    ("import math\n# import torch\ns = 'import torch'\n", None),
    ("from . import torch\n", None),
    ("import torchvision\n", None),
])
def test_imported_track_reads_imports_from_the_ast(source, track):
    assert imported_track(source) == track


def test_track_for_file_falls_back_to_none(tmp_path):
    torch_file = tmp_path / "a.py"
    torch_file.write_text("import torch\n")
    assert track_for_file("softmax", torch_file) == "torch"
    assert track_for_file("causal_mask", torch_file) in (None, "torch")  # torch only once that track exists
    broken = tmp_path / "b.py"
    broken.write_text("import torch\ndef (:\n")
    assert track_for_file("softmax", broken) is None
    assert track_for_file("no_such_exercise", torch_file) is None


# -- the CLI -------------------------------------------------------------------------------------------

def test_list_shows_every_track():
    result = CliRunner().invoke(main, ["list"])
    assert result.exit_code == 0
    line = next(l for l in result.output.splitlines() if l.startswith("softmax"))
    assert "tracks: numpy (default), torch" in line


def test_show_and_init_take_a_track(tmp_path):
    runner = CliRunner()
    shown = runner.invoke(main, ["show", "softmax", "--track", "torch"])
    assert shown.exit_code == 0 and "track: torch" in shown.output and "PyTorch track" in shown.output
    made = runner.invoke(main, ["init", "softmax", str(tmp_path), "--track", "torch"])
    assert made.exit_code == 0 and "--track torch" in made.output
    assert (tmp_path / "softmax.py").read_text() == get_exercise("softmax", track="torch").stub_path.read_text()
    bad = runner.invoke(main, ["init", "softmax", str(tmp_path / "x"), "--track", "jax"])
    assert bad.exit_code == 2


def test_submit_with_a_missing_track_is_a_usage_error(tmp_path):
    f = tmp_path / "s.py"
    f.write_text("import numpy as np\n")
    toy = tmp_path / "home"
    make_toy(toy, TOML.split("[tracks.torch]")[0])
    result = CliRunner(env={"GRADER_HOME": str(toy)}).invoke(main, ["submit", "toy", str(f), "--track", "torch"])
    assert result.exit_code == 2 and "no 'torch' track" in result.output


# -- scorecards and batch ------------------------------------------------------------------------------

def test_scorecard_schema_accepts_a_track_and_old_cards_without_one():
    schema = json.loads((SCHEMA_DIR / "scorecard.schema.json").read_text())
    ex_schema = schema["properties"]["exercise"]
    jsonschema.validate({"id": "softmax", "version": "1.0.0", "title": "t"}, ex_schema)
    jsonschema.validate({"id": "softmax", "version": "1.0.0", "title": "t", "track": "torch"}, ex_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"id": "softmax", "version": "1.0.0", "title": "t", "track": "jax"}, ex_schema)


def test_batch_takes_the_track_from_the_file_or_the_option(tmp_path):
    folder = tmp_path / "softmax"
    folder.mkdir()
    (folder / "ana.py").write_text("import torch\n\ndef softmax(x, axis=-1):\n    return x\n")
    (folder / "bo.py").write_text("import numpy as np\n\ndef softmax(x, axis=-1):\n    return x\n")
    (folder / "cy.py").write_text("def softmax(x, axis=-1):\n    return x\n")
    found = discover(tmp_path)
    assert {i.candidate: i.track for i in found.items} == {"ana": "torch", "bo": "numpy", "cy": None}
    forced = discover(tmp_path, track="numpy")
    assert {i.candidate: i.track for i in forced.items} == {"ana": "numpy", "bo": "numpy", "cy": "numpy"}
    (tmp_path / "gqa").mkdir()
    (tmp_path / "gqa" / "dee.py").write_text("import torch\n")
    forced = discover(tmp_path, track="numpy")
    gqa_tracks = get_exercise("gqa").tracks
    if "numpy" not in gqa_tracks:
        assert any("has no numpy track" in why for _, why in forced.ignored)


def test_a_card_of_another_track_is_not_current(tmp_path):
    sub = tmp_path / "s.py"
    sub.write_text(textwrap.dedent(REFERENCE_SOURCE))
    card = tmp_path / "card.json"
    from grader.grading.grade import grade_submission  # noqa: PLC0415
    from grader.grading.scorecard import write_scorecard  # noqa: PLC0415

    ex = get_exercise("softmax", track="torch")
    write_scorecard(grade_submission(ex, sub, sandbox="process", seed=5), card)
    item = BatchItem("s", "softmax", sub, "torch")
    assert is_current(item, card, ex.version, "torch")
    assert not is_current(item, card, ex.version, "numpy")


REFERENCE_SOURCE = (ROOT / "reference" / "softmax_torch.py").read_text()


# -- the softmax torch track, graded end to end ---------------------------------------------------------

@pytest.fixture
def grade_torch(tmp_path):
    def run(source: str, seed: int = 7):
        path = tmp_path / "sub.py"
        path.write_text(textwrap.dedent(source))
        from grader.grading.grade import grade_submission  # noqa: PLC0415

        return grade_submission(get_exercise("softmax", track="torch"), path, sandbox="process", seed=seed)

    return run


def test_softmax_torch_track_records_the_track_and_grades_the_reference_full(grade_torch):
    card = grade_torch(REFERENCE_SOURCE)
    assert card.exercise["track"] == "torch" and card.all_passed and card.max_score == 19
    assert {"gradients", "half_precision"} <= set(verdicts(card))


def test_softmax_torch_track_catches_a_wrong_backward_only_in_gradients(grade_torch):
    card = grade_torch((ROOT / "submissions/samples/softmax/torch/bug_diagonal_backward.py").read_text())
    bad = {k for k, v in verdicts(card).items() if v != "passed"}
    assert bad == {"gradients"}
    gradient = next(c for c in card.checks if c.id == "gradients")
    assert "gradient of x" in gradient.message


@pytest.mark.parametrize("sample", ["bug_nan_grad_all_neg_inf.py", "bug_logsumexp_nan_grad.py"])
def test_softmax_torch_nan_gradient_of_an_all_neg_inf_slice_fails_gradients_alone(grade_torch, sample):
    """Forward right everywhere (the all -inf slice zeroed after the fact), gradient NaN in that slice:
    only ``gradients`` fails, and its diagnosis names the all -inf slice (issue 15: NaN gradients)."""
    source = (ROOT / "submissions/samples/softmax/torch" / sample).read_text()
    mod = {}
    exec(compile(source, sample, "exec"), mod)  # noqa: S102 - a repository sample
    x = torch.tensor([[0.5, float("-inf"), 2.0], [float("-inf")] * 3], dtype=torch.float64, requires_grad=True)
    y = mod["softmax"](x)
    torch.testing.assert_close(y[0], torch.softmax(x[0].detach(), -1))
    assert torch.equal(y[1].detach(), torch.zeros(3, dtype=torch.float64))
    (grad,) = torch.autograd.grad(y, x, torch.ones_like(y) * torch.tensor([[1.0], [2.0]], dtype=torch.float64))
    assert torch.isnan(grad[1]).all() and torch.isfinite(grad[0]).all()   # the mistake, shown independently
    card = grade_torch(source)
    bad = {k for k, v in verdicts(card).items() if v != "passed"}
    assert bad == {"gradients"}
    gradient = next(c for c in card.checks if c.id == "gradients")
    assert "NaN" in gradient.message and "entirely -inf" in gradient.message


def test_softmax_torch_reference_gradient_of_an_all_neg_inf_slice_is_zero():
    sm = _load(ROOT / "reference" / "softmax_torch.py").softmax
    x = torch.tensor([[0.5, float("-inf"), 2.0], [float("-inf")] * 3], dtype=torch.float64, requires_grad=True)
    g = torch.tensor([[0.3, -1.0, 2.0], [1.0, 2.0, 3.0]], dtype=torch.float64)
    (grad,) = torch.autograd.grad(sm(x), x, g)
    row = x[0, [0, 2]].detach().requires_grad_(True)
    (expected,) = torch.autograd.grad(torch.softmax(row, -1), row, g[0, [0, 2]])
    torch.testing.assert_close(grad[0, [0, 2]], expected)
    assert grad[0, 1].item() == 0.0 and torch.equal(grad[1], torch.zeros(3, dtype=torch.float64))


def test_numpy_card_records_numpy(grade_source):
    card = grade_source("softmax", (ROOT / "reference" / "softmax.py").read_text())
    assert card.exercise["track"] == "numpy" and card.all_passed


# -- the torch reference against torch's own softmax ---------------------------------------------------

def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"ref_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("module", [ROOT / "reference" / "softmax_torch.py",
                                    ROOT / "exercises" / "softmax" / "baselines_torch" / "logsumexp.py"])
@pytest.mark.parametrize("shape, axis, dtype", [((7,), 0, torch.float64), ((3, 5), 0, torch.float32),
                                                ((2, 3, 4, 5), 2, torch.float64), ((4, 1, 6), -3, torch.float32)])
def test_torch_softmax_reference_matches_torch(module, shape, axis, dtype):
    sm = _load(module).softmax
    x = (torch.randn(shape, generator=torch.Generator().manual_seed(3), dtype=torch.float64) * 4).to(dtype)
    x.requires_grad_(True)
    ours = sm(x, axis)
    theirs = torch.softmax(x, dim=axis)
    torch.testing.assert_close(ours, theirs)
    g = torch.randn(shape, dtype=dtype)
    torch.testing.assert_close(torch.autograd.grad(ours, x, g)[0], torch.autograd.grad(theirs, x, g)[0])


def test_logsumexp_baseline_gradient_is_zero_on_an_all_neg_inf_slice():
    """torch.logsumexp of an all -inf slice has a NaN backward (exp(-inf - -inf)); the baseline never
    takes it there, so its gradient matches torch.softmax's on finite rows and is 0 on that slice."""
    sm = _load(ROOT / "exercises" / "softmax" / "baselines_torch" / "logsumexp.py").softmax
    x = torch.tensor([[0.5, float("-inf"), 2.0], [float("-inf")] * 3, [1e3, 1e3 - 1.0, -2.0]],
                     dtype=torch.float64, requires_grad=True)
    g = torch.tensor([[1.0, 2.0, -1.0], [3.0, -2.0, 1.0], [0.5, -1.5, 2.0]], dtype=torch.float64)
    (grad,) = torch.autograd.grad(sm(x), x, g)
    rows = x.detach()[[0, 2]].requires_grad_(True)
    (want,) = torch.autograd.grad(torch.softmax(rows, dim=-1), rows, g[[0, 2]])
    torch.testing.assert_close(grad[[0, 2]], want)
    assert torch.equal(grad[1], torch.zeros(3, dtype=torch.float64))
    assert torch.equal(sm(x.detach())[1], torch.zeros(3, dtype=torch.float64))


def test_torch_softmax_reference_edge_values():
    sm = _load(ROOT / "reference" / "softmax_torch.py").softmax
    x = torch.tensor([[0.0, float("-inf"), 1.0], [float("-inf")] * 3, [1e4, 1e4 - 1.0, -1e4]], dtype=torch.float32)
    out = sm(x)
    expected = torch.softmax(x[[0, 2]], dim=-1)
    torch.testing.assert_close(out[[0, 2]], expected)
    assert out[0, 1].item() == 0.0 and torch.equal(out[1], torch.zeros(3))
    for half in (torch.float16, torch.bfloat16):
        y = sm(x.to(half))
        assert y.dtype == half and not torch.isnan(y).any()
        torch.testing.assert_close(y[0].float(), torch.softmax(x[0], -1), rtol=1e-2, atol=1e-2)
    xg = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: sm(t, 0), (xg,))


def test_review_keeps_the_tracks_of_one_exercise_apart():
    from grader.cohort.review import review_tables  # noqa: PLC0415
    from grader.grading.scorecard import CheckResult, Scorecard  # noqa: PLC0415

    def card(track: str, checks: list[str]) -> Scorecard:
        results = tuple(CheckResult(id=c, title=c, category="correctness", visibility="public", verdict="passed",
                                    points=1.0, max_points=1.0, message="") for c in checks)
        return Scorecard(exercise={"id": "softmax", "version": "1.0.0", "title": f"softmax ({track})", "track": track},
                         submission={"path": f"{track}.py", "sha256": "0" * 64},
                         sandbox={"backend": "none", "image": None, "isolation": {}, "limits": {}},
                         environment={}, started_at="2026-01-01T00:00:00+00:00", duration_s=0.0, status="graded",
                         status_message="", score=float(len(checks)), max_score=float(len(checks)), checks=results,
                         output={"text": "", "truncated": False}, seed=1, grader_version="0")

    tables = review_tables([("a", card("numpy", ["values"])), ("b", card("torch", ["values", "gradients"]))])
    assert sorted((t.title, tuple(t.checks)) for t in tables) == [
        ("softmax (numpy)", ("values",)), ("softmax (torch)", ("values", "gradients"))]


def test_plan_input_gives_arrays_or_tensors_by_track_and_transposed_tensors_are_views():
    import types  # noqa: PLC0415

    from grader.grading.grade import run_in_process  # noqa: PLC0415
    from grader.run.plan import PlanBuilder  # noqa: PLC0415

    b = PlanBuilder()
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert b.input("a", x, track="numpy") == {"array": "a"}
    assert b.input("t", x, track="torch", dtype="float64", transpose=[1, 0])["transpose"] == [1, 0]
    with pytest.raises(ValueError):
        b.input("g", x, track="numpy", requires_grad=True)
    with pytest.raises(ValueError):
        b.input("h", x, track="torch", requires_grad=True, transpose=[1, 0])
    with pytest.raises(ValueError):
        b.input("j", x, track="jax")
    module = types.ModuleType("probe_module")
    module.describe = lambda t: torch.cat([torch.tensor([float(t.is_contiguous()), float(t.dtype == torch.float64)],
                                                        dtype=torch.float64), t.reshape(-1)])
    b.call("c", "describe", [{"tensor": "t", "dtype": "float64", "transpose": [1, 0]}])
    plan = b.plan
    step = run_in_process(plan.wire(), plan.arrays, module).steps[plan.steps[0].id]
    assert step.report["ok"], step.report
    got = step.arrays[step.report["output"]["key"]]
    # a non-contiguous float64 view whose values, read in logical order, are the registered array's
    assert got[:2].tolist() == [0.0, 1.0]
    np.testing.assert_array_equal(got[2:], x.reshape(-1))


def test_track_for_source_reads_uploads():
    from grader.grading.exercise import track_for_source  # noqa: PLC0415

    assert track_for_source("softmax", b"import torch\n") == "torch"
    assert track_for_source("softmax", "import numpy as np\n") == "numpy"
    assert track_for_source("softmax", b"\xff\xfe not utf-8") is None
    assert track_for_source("softmax", b"def f(:\n") is None
    assert track_for_source("softmax", b"x = 1\n") is None


@pytest.mark.parametrize("exercise_id", exercise_ids())
def test_every_check_of_every_track_is_named_in_the_statement(exercise_id):
    """A candidate reads spec.md to learn what is graded: each check id (of each track) appears there
    in backticks (mha and gqa once left out grad_edge_cases)."""
    for track in get_exercise(exercise_id).tracks:
        ex = get_exercise(exercise_id, track=track)
        named = set(re.findall(r"`([A-Za-z0-9_]+)`", ex.spec_path.read_text(encoding="utf-8")))
        assert [c.id for c in ex.checks if c.id not in named] == [], f"{exercise_id} ({track}): {ex.spec_path.name}"


def test_show_prints_a_tracks_own_statement_where_it_has_one():
    """The softmax torch track has spec_torch.md: `grade show --track torch` is that statement (tensors,
    gradients), not the NumPy text under a note; a track without one keeps the note."""
    runner = CliRunner()
    torch_spec = runner.invoke(main, ["show", "softmax", "--track", "torch"]).output
    assert "# softmax — a numerically stable softmax (PyTorch)" in torch_spec
    assert "torch.Tensor" in torch_spec and "`gradients`" in torch_spec
    assert "You are on the torch track" not in torch_spec and "NumPy only" not in torch_spec
    assert get_exercise("softmax", track="torch").has_track_spec
    numpy_spec = runner.invoke(main, ["show", "softmax"]).output
    assert "(NumPy)" in numpy_spec and "You are on" not in numpy_spec
    other = get_exercise("mha", track="numpy")
    if not other.has_track_spec:
        assert "You are on the numpy track" in runner.invoke(main, ["show", "mha", "--track", "numpy"]).output
