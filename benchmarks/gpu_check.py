"""Grade torch samples on this machine and print, per file, the device in the scorecard and the
probe (complexity) verdicts, as JSON lines; ``benchmarks/gpu_check.sh`` runs it twice, with CUDA
visible and hidden (``CUDA_VISIBLE_DEVICES=``), and compares the two.

    python benchmarks/gpu_check.py OUT.json [--samples N]

For each exercise with a torch track: its reference (a correct file) and the first ``N`` samples of
that track (``submissions/samples/<id>/`` when torch is the default track, else ``.../torch/``),
graded in the process sandbox at seed 5. Exit 1 when a grading is an infrastructure error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the repository's grader, installed or not


def torch_files(samples: int) -> list[tuple[str, Path]]:
    """``(exercise id, file)`` pairs to grade: each torch track's reference and first ``samples`` samples."""
    from grader.grading.exercise import exercise_ids, get_exercise  # noqa: PLC0415
    pairs = []
    for exercise_id in exercise_ids():
        exercise = get_exercise(exercise_id)
        if "torch" not in exercise.tracks:
            continue
        torch_ex = get_exercise(exercise_id, track="torch")
        folder = ROOT / "submissions" / "samples" / exercise_id
        folder = folder if exercise.framework == "torch" else folder / "torch"
        pairs.append((exercise_id, Path(torch_ex.reference_path)))
        pairs += [(exercise_id, p) for p in sorted(folder.glob("*.py"))[:samples]]
    return pairs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--samples", type=int, default=2)
    args = parser.parse_args(argv)
    from grader.grading.exercise import get_exercise  # noqa: PLC0415
    from grader.grading.grade import grade_submission  # noqa: PLC0415
    rows, bad = [], 0
    for exercise_id, path in torch_files(args.samples):
        card = grade_submission(get_exercise(exercise_id, track="torch"), path, sandbox="process", seed=5)
        probes = {c.id: c.verdict for c in card.checks if c.category == "complexity"}
        why = {c.id: f"[{c.details.get('method')}] {c.message[:400]}" for c in card.checks
               if c.category == "complexity" and c.verdict != "passed"}   # what a differing verdict says
        row = {"exercise": exercise_id, "file": str(path.relative_to(ROOT)), "status": card.status,
               "device": card.environment.get("device"), "score": card.score, "probes": probes, "why": why,
               "mismatch": [c.id for c in card.checks if c.details.get("device_mismatch")]}
        bad += card.status == "infrastructure_error"
        rows.append(row)
        print(json.dumps(row), flush=True)
    Path(args.out).write_text(json.dumps(rows, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
