"""The ``grade`` command line: parses arguments, calls one library function, renders the result.

Exit codes: 0 graded and every check passed; 1 graded with failures (or not gradable: compile
error, timeout, crash); 2 usage error (unknown exercise, missing file, bad option); 3 infrastructure
error (the grader's own fault).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import click
from rich.console import Console

from grader import __version__
from grader.exercise import ExerciseInvalid, UnknownExercise, exercise_ids, get_exercise
from grader.sandbox import BACKENDS
from grader.verdicts import EXIT_ALL_PASSED, EXIT_FAILURES, EXIT_INFRASTRUCTURE, EXIT_USAGE, Status


def _console(err: bool = False) -> Console:
    return Console(stderr=err, highlight=False, soft_wrap=True)


def _load(exercise_id: str):
    try:
        return get_exercise(exercise_id)
    except UnknownExercise as exc:
        raise click.UsageError(str(exc).strip("'\"")) from exc
    except ExerciseInvalid as exc:
        _console(err=True).print(f"error: exercise {exercise_id!r} is broken: {exc}", markup=False)
        sys.exit(EXIT_INFRASTRUCTURE)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="grade")
def main() -> None:
    """Grade self-attention interview exercises.

    Candidates: `grade list`, `grade show ID`, `grade init ID`, then `grade submit ID FILE`.
    Authors: `grade selfcheck [ID...]` proves references, stubs and samples are graded as intended.
    """


@main.command("list")
def list_cmd() -> None:
    """List the exercises."""
    console = _console()
    for exercise_id in exercise_ids():
        ex = _load(exercise_id)
        console.print(f"[bold]{ex.id:<18}[/bold] {ex.title}  [dim]({len(ex.checks)} checks, "
                      f"{ex.max_score:g} points, {ex.framework})[/dim]")


@main.command()
@click.argument("exercise_id", metavar="ID")
def show(exercise_id: str) -> None:
    """Print the statement (spec.md) of exercise ID."""
    ex = _load(exercise_id)
    click.echo(ex.spec_path.read_text(encoding="utf-8"))


@main.command()
@click.argument("exercise_id", metavar="ID")
@click.argument("directory", required=False, default=".", type=click.Path(file_okay=False, path_type=Path))
def init(exercise_id: str, directory: Path) -> None:
    """Copy the starting file of exercise ID into DIRECTORY (default: here) as ID.py.

    Refuses to overwrite an existing file.
    """
    ex = _load(exercise_id)
    target = directory / f"{ex.id}.py"
    if target.exists():
        raise click.UsageError(f"{target} already exists; not overwriting it")
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ex.stub_path, target)
    click.echo(f"wrote {target}; when ready: grade submit {ex.id} {target}")


@main.command()
@click.argument("exercise_id", metavar="ID")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the JSON scorecard here (default: scorecards/<ID>-<file stem>.json).")
@click.option("--json", "as_json", is_flag=True, help="Print the JSON scorecard instead of the table.")
@click.option("--sandbox", type=click.Choice(BACKENDS), default="auto", show_default=True,
              help="Where the submission runs: docker when ready (auto), or a local rlimited process.")
@click.option("--require-isolation", is_flag=True, help="Refuse to grade without the docker sandbox.")
@click.option("--seed", type=int, default=None, help="Seed of the hidden cases (default: random, recorded).")
@click.option("--view", type=click.Choice(["candidate", "interviewer"]), default="candidate", show_default=True,
              help="candidate hides the inputs and numbers of hidden cases; interviewer shows all.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
def submit(exercise_id: str, file: Path, out: Path | None, as_json: bool, sandbox: str,
           require_isolation: bool, seed: int | None, view: str, quiet: bool) -> None:
    """Grade FILE as a solution of exercise ID and write its scorecard.

    Exit code 0 when every check passed, 1 when some did not (or the file did not compile, timed out
    or crashed), 2 for a usage error, 3 when the grader itself failed.
    """
    from grader.grading import SubmissionUnreadable, grade_submission  # noqa: PLC0415 - fast --help
    from grader.render import render_scorecard  # noqa: PLC0415
    from grader.scorecard import write_scorecard  # noqa: PLC0415

    ex = _load(exercise_id)
    if not file.is_file():
        raise click.UsageError(f"submission file {file} does not exist" if not file.exists()
                               else f"{file} is not a file")
    err = _console(err=True)
    progress = None if quiet else (lambda msg: err.print(f"[dim]grade: {msg}[/dim]"))
    try:
        card = grade_submission(ex, file, sandbox=sandbox, seed=seed, require_isolation=require_isolation,
                                progress=progress)
    except SubmissionUnreadable as exc:
        raise click.UsageError(str(exc)) from exc
    shown = card.candidate_view() if view == "candidate" else card
    out = out or Path("scorecards") / f"{ex.id}-{file.stem}.json"
    try:
        write_scorecard(shown, out)
    except OSError as exc:
        err.print(f"error: cannot write the scorecard to {out}: {exc}", markup=False)
        sys.exit(EXIT_USAGE)
    if as_json:
        click.echo(json.dumps(shown.to_json(), indent=2))
    else:
        render_scorecard(shown, _console())
        err.print(f"[dim]scorecard written to {out}[/dim]")
    if card.status == Status.INFRASTRUCTURE_ERROR:
        err.print(f"infrastructure error (not the candidate's fault): {card.status_message}", markup=False)
        sys.exit(EXIT_INFRASTRUCTURE)
    sys.exit(EXIT_ALL_PASSED if card.all_passed else EXIT_FAILURES)


@main.command()
@click.argument("exercise_ids", metavar="[ID]...", nargs=-1)
@click.option("--sandbox", type=click.Choice(BACKENDS), default="auto", show_default=True)
@click.option("--seed", type=int, default=1234, show_default=True, help="Seed of the hidden cases.")
@click.option("--json", "as_json", is_flag=True, help="Print the matrix as JSON.")
def selfcheck(exercise_ids: tuple[str, ...], sandbox: str, seed: int, as_json: bool) -> None:
    """Prove exercises grade as intended: the reference scores full marks, the stub scores 0
    (status graded), every correct sample scores full marks and every wrong sample fails the
    check its docstring names. Exit code 0 when all of that holds, 1 otherwise."""
    from grader.selfcheck import render_matrix, run_selfcheck  # noqa: PLC0415

    ids = list(exercise_ids) or exercise_ids_all()
    exercises = [_load(i) for i in ids]
    err = _console(err=True)
    rows = run_selfcheck(exercises, sandbox=sandbox, seed=seed,
                         progress=lambda msg: err.print(f"[dim]selfcheck: {msg}[/dim]"))
    if as_json:
        click.echo(json.dumps([r.to_json() for r in rows], indent=2))
    else:
        render_matrix(rows, _console())
    if any(r.infrastructure for r in rows):
        sys.exit(EXIT_INFRASTRUCTURE)
    sys.exit(EXIT_ALL_PASSED if all(r.ok for r in rows) else EXIT_FAILURES)


def exercise_ids_all() -> list[str]:
    """Every exercise id (for commands whose ID argument is optional)."""
    return exercise_ids()


if __name__ == "__main__":  # pragma: no cover
    main()
