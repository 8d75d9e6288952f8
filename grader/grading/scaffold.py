"""``grade new ID --track numpy|torch``: scaffold an exercise so that ``grade selfcheck ID`` runs
from the first minute (and fails, saying what is missing: the reference, the samples).

It writes the files ``docs/authoring.md`` walks through: ``exercises/<id>/`` (exercise.toml,
spec.md, stub.py, checks.py) and ``reference/<id>.py``, plus the (empty) samples folder
``submissions/samples/<id>/``. Every file is a template with TODO markers; none is overwritten.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from grader.grading.exercise import TRACKS

ID_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")


class ScaffoldError(ValueError):
    """The id, entry point or track is unusable, or a file of the exercise already exists."""


_TOML = '''id = "{id}"
title = "TODO: one-line title ({library})"
version = "0.1.0"
framework = "{track}"
summary = "TODO: what the candidate implements, in one sentence."
entry_points = ["{entry}"]

[limits]
wall_seconds = 60
cpu_seconds = 60
memory_bytes = 2147483648
step_seconds = 10

[api]
# What the track forbids: the library call that would do the exercise, and the other framework.
forbidden_modules = {forbidden_modules}
forbidden_names = []
{forbidden_ops}
# One [[checks]] table per graded property; build_plan in checks.py must add at least one judged
# step to every check declared here, and to no other (grade selfcheck says which one is missing).
[[checks]]
id = "values"
title = "TODO: what the public value cases cover"
category = "correctness"
visibility = "public"
points = 2

[[checks]]
id = "hidden_values"
title = "Hidden cases: random shapes and scales"
category = "correctness"
visibility = "hidden"
points = 2

# The other track: add [tracks.{other}] with what differs (title, api, extra checks such as
# gradients, drop_checks, probes) and the files stub_{other}.py, reference/{id}_{other}.py,
# submissions/samples/{id}/{other}/ (docs/authoring.md, "A second track").
'''

_SPEC = '''# {id}

TODO: the contract, as a candidate reads it (see `grade show softmax` for the level of detail).

```python
def {entry}(x{annotation}){returns}: ...
```

- **Shapes and dtypes**: TODO (which shapes, which dtypes, the output's dtype).
- **Edge cases that are graded**: TODO (empty/fully masked/huge inputs, `ValueError`s with their
  conditions).
- **Forbidden**: TODO (the library call that would do the exercise).

## How it is graded

| check | what it covers |
| --- | --- |
| `values` | TODO |
| `hidden_values` | hidden random cases |
'''

_STUB = '''"""Exercise `{id}` ({library} track).

Read the full statement with `grade show {id}`. Grade your work with `grade submit {id} THIS_FILE`.
"""

import {module}


def {entry}(x{annotation}){returns}:
    """TODO: the contract in a few lines (shapes, dtypes, edge cases, errors)."""
    raise NotImplementedError("implement {entry}")
'''

_REFERENCE = '''"""Reference solution of `{id}` ({library} track).

TODO: name the source of every formula and convention (paper, section, equation), write it plainly
(nanoGPT style: a shape comment on every tensor line), and check it in tests against an
independent oracle (torch's own ops, or math by hand).
"""

import {module}


def {entry}(x{annotation}){returns}:
    """TODO: docstring with shapes, dtypes and the errors raised."""
    raise NotImplementedError("TODO: write the reference solution in reference/{id}.py")
'''

_CHECKS = '''"""Host-side checks for `{id}`: the plan of public and hidden cases, and how each is judged.

TODO: say which cases each check runs, and which mistakes the diagnoses name.
"""

from __future__ import annotations

import numpy as np

from grader.judge.judges import close
from grader.run.plan import Plan, PlanBuilder


def _describe(x: np.ndarray, note: str = "") -> str:
    return f"x: shape {{x.shape}}, {{x.dtype}}" + (f", {{note}}" if note else "")


def build_plan(public_seed: int, hidden_seed: int, track: str = "{track}") -> Plan:
    """Build the {id} plan of ``track``: public cases from ``public_seed``, hidden ones from
    ``hidden_seed`` (inputs are arrays in the numpy track, tensors in the torch track)."""
    b = PlanBuilder()
    rng = np.random.default_rng(public_seed)
    n = 0

    def add(check: str, x: np.ndarray, note: str = "", judge=None) -> None:
        nonlocal n
        n += 1
        arg = b.input(f"x{{n}}", x, track=track, label="x")
        b.call(check, "{entry}", [arg], judge=judge or close(), describe=_describe(x, note))

    # TODO: the public cases of every check declared in exercise.toml.
    for shape in [(4, 8), (2, 3, 5)]:
        add("values", rng.standard_normal(shape).astype(np.float32))

    hidden = np.random.default_rng(hidden_seed)
    for _ in range(3):
        shape = tuple(int(d) for d in hidden.integers(1, 9, size=int(hidden.integers(1, 4))))
        add("hidden_values", hidden.standard_normal(shape).astype(np.float64))
    return b.plan
'''


def scaffold_exercise(root: Path, exercise_id: str, track: str, entry: str | None = None) -> list[Path]:
    """Write the template files of a new exercise under ``root``.

    Args:
        root: the project root (holding ``exercises/`` and ``reference/``).
        exercise_id: the new id (lowercase letters, digits, underscores; starts with a letter).
        track: the default track, ``numpy`` or ``torch``.
        entry: the function the candidate writes (default: the id).

    Returns:
        The files and folder written, in order.

    Raises:
        ScaffoldError: a bad id, entry point or track, or the exercise's folder or reference exists.
    """
    entry = entry or exercise_id
    if not ID_PATTERN.match(exercise_id):
        raise ScaffoldError(f"exercise id {exercise_id!r} must match {ID_PATTERN.pattern} (e.g. layer_norm)")
    if not entry.isidentifier() or keyword.iskeyword(entry):
        raise ScaffoldError(f"entry point {entry!r} is not a Python function name")
    if track not in TRACKS:
        raise ScaffoldError(f"track must be one of {', '.join(TRACKS)}, not {track!r}")
    folder = root / "exercises" / exercise_id
    reference = root / "reference" / f"{exercise_id}.py"
    samples = root / "submissions" / "samples" / exercise_id
    for path in (folder, reference):
        if path.exists():
            raise ScaffoldError(f"{path} already exists; not overwriting it")
    other = "torch" if track == "numpy" else "numpy"
    torch_track = track == "torch"
    fields = {
        "id": exercise_id, "entry": entry, "track": track, "other": other,
        "library": "PyTorch" if torch_track else "NumPy", "module": "torch" if torch_track else "numpy as np",
        "annotation": ": torch.Tensor" if torch_track else ": np.ndarray",
        "returns": " -> torch.Tensor" if torch_track else " -> np.ndarray",
        "forbidden_modules": '["scipy", "jax", "tensorflow"]' if torch_track
        else '["torch", "scipy", "jax", "tensorflow"]',
        "forbidden_ops": ('# aten ops the runtime audit flags (fnmatch patterns), e.g. "aten._scaled_dot_product_*"\n'
                          'forbidden_ops = []\n') if torch_track else "",
    }
    files = {
        folder / "exercise.toml": _TOML, folder / "spec.md": _SPEC, folder / "stub.py": _STUB,
        folder / "checks.py": _CHECKS, reference: _REFERENCE,
    }
    folder.mkdir(parents=True)
    reference.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for path, template in files.items():
        path.write_text(template.format(**fields), encoding="utf-8")
        written.append(path)
    samples.mkdir(parents=True, exist_ok=True)
    written.append(samples)
    return written
