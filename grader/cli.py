"""The ``grade`` command line: parses arguments, calls one library function, renders the result.

Exit codes: 0 graded and every check passed; 1 graded with failures (or not gradable: compile
error, timeout, crash); 2 usage error (unknown exercise, missing file, bad option, unwritable
output), always one line on stderr and before any output is touched; 3 infrastructure error (the
grader's own fault); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
from pathlib import Path

import click
from rich.console import Console

from grader import __version__
from grader.grading.exercise import TRACKS, ExerciseInvalid, UnknownExercise, exercise_ids, get_exercise
from grader.sandbox import BACKENDS
from grader.judge.verdicts import EXIT_ALL_PASSED, EXIT_FAILURES, EXIT_INFRASTRUCTURE, EXIT_USAGE, Status


def _console(err: bool = False) -> Console:
    return Console(stderr=err, highlight=False, soft_wrap=True)


#: Hidden-case seeds: non-negative and below 2**32 (what ``numpy.random.default_rng`` and the plans'
#: derived seeds accept).
SEED = click.IntRange(min=0, max=2**32 - 1)


def _fail(message: str, code: int = EXIT_USAGE) -> None:
    """Print ``message`` as one line on stderr and exit with ``code`` (no traceback)."""
    click.echo(f"error: {' '.join(str(message).split())}", err=True)
    sys.exit(code)


def _probe_folder(folder: Path) -> None:
    """Raise OSError unless a file can be created in ``folder`` or, where it does not exist yet, in its
    nearest existing ancestor (nothing is left behind: the probe file is removed)."""
    import tempfile  # noqa: PLC0415

    folder = Path(folder).absolute()
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise NotADirectoryError(20, "Not a directory")
    with tempfile.NamedTemporaryFile(dir=folder, prefix=".grade-probe-"):
        pass


def _writable_file(path: Path, what: str) -> Path:
    """Check, before anything is graded or written, that a file can be written at ``path`` (it is not a
    folder, and its folder exists or can be made and takes files). Exits 2 with one line otherwise."""
    path = Path(path)
    if path.is_dir():
        _fail(f"cannot write the {what} to {path}: it is a folder")
    try:
        _probe_folder(path.parent)
    except OSError as exc:
        _fail(f"cannot write the {what} to {path}: {exc.strerror or exc}")
    return path


def _writable_dir(path: Path, what: str) -> Path:
    """Like ``_writable_file`` for a folder that files will be written into."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        _fail(f"cannot write the {what} to {path}: it is not a folder")
    try:
        _probe_folder(path)
    except OSError as exc:
        _fail(f"cannot write the {what} to {path}: {exc.strerror or exc}")
    return path


def _load(exercise_id: str, track: str | None = None):
    try:
        return get_exercise(exercise_id, track=track)
    except UnknownExercise as exc:
        raise click.UsageError(str(exc).strip("'\"")) from exc
    except ExerciseInvalid as exc:
        _console(err=True).print(f"error: exercise {exercise_id!r} is broken: {exc}", markup=False)
        sys.exit(EXIT_INFRASTRUCTURE)


class GradeGroup(click.Group):
    """The ``grade`` group: every usage error is one line on stderr (exit 2), Ctrl-C exits 130.

    Click's standalone mode prints a usage block before a usage error and ``Aborted!`` (exit 1) on
    Ctrl-C; ``main`` runs the commands in non-standalone mode and renders those cases itself.
    """

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):  # noqa: D102
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except (click.exceptions.Abort, KeyboardInterrupt):
            click.echo("interrupted", err=True)
            sys.exit(130)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            hint = ""
            if isinstance(exc, click.UsageError) and exc.ctx is not None:
                hint = f" (see `{exc.ctx.command_path} -h`)"
            click.echo(f"error: {' '.join(exc.format_message().split())}{hint}", err=True)
            sys.exit(exc.exit_code)
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(cls=GradeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="grade")
def main() -> None:
    """Grade self-attention interview exercises.

    \b
    Candidates: `grade list`, `grade show ID`, `grade init ID`, then `grade submit ID FILE`.
    Interviewers: `grade batch DIR` grades a cohort, `grade review CARD...` shows scorecards side by
      side, `grade report CARD... -o report.html` writes an HTML report.
    Authors: `grade selfcheck [ID...]` proves references, stubs and samples are graded as intended.
    Sandbox: `grade sandbox status`, `grade sandbox build`.
    Exit codes: 0 ok (all passed), 1 graded with failures, 2 usage error, 3 grader fault, 130 Ctrl-C.
    """


#: Set by ``run`` (the console script): ``grade submit`` then ends through ``_finish``'s fast exit.
_FAST_EXIT = False


def _finish(code: int):
    """End ``grade submit`` with exit code ``code`` once its scorecard and output are written.

    Run from the console script (``run``), the process ends here without the interpreter's own
    finalisation, which costs about a second with torch imported (module teardown; measured in
    benchmarks/phases.py): the output is flushed, the ``atexit`` handlers still run (the docker
    backend waits for its container removals, warm pools close, logging flushes), then ``os._exit``.
    Called in-process (click's test runner, a library caller), it is a plain ``sys.exit``.
    """
    if not _FAST_EXIT:
        sys.exit(code)
    sys.stdout.flush()
    sys.stderr.flush()
    atexit._run_exitfuncs()  # noqa: SLF001 - the documented handlers, run as a normal exit would
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run() -> None:
    """The ``grade`` console script (and ``python -m grader.cli``): ``main`` with ``grade submit``'s
    fast exit (``_finish``)."""
    global _FAST_EXIT
    _FAST_EXIT = True
    main()


def _track_option(help_text: str = "Track: numpy (arrays) or torch (tensors, gradients graded); "
                                    "default: the exercise's original framework."):
    return click.option("--track", type=click.Choice(TRACKS), default=None, help=help_text)


def _track_flag(ex) -> str:
    """`` --track T`` when ``ex`` is not in its default track (for commands printed to the user)."""
    return "" if ex.is_default_track else f" --track {ex.track}"


def _track_hint(ex, file: Path) -> str | None:
    """A one-line note when ``file``'s imports name another track of ``ex`` than the one graded."""
    from grader.grading.exercise import track_for_source  # noqa: PLC0415 - fast --help
    from grader.grading.notebook import is_notebook_name, submission_text  # noqa: PLC0415
    try:
        data = file.read_bytes()
    except OSError:
        return None
    imported = track_for_source(ex.id, (submission_text(data) or "") if is_notebook_name(file.name) else data)
    if imported is None or imported == ex.track:
        return None
    return (f"{file.name} imports {imported} and is graded in the {ex.track} track; "
            f"for the {imported} track use --track {imported}.")


@main.command("list")
def list_cmd() -> None:
    """List the exercises and their tracks (the default track first)."""
    console = _console()
    ids = exercise_ids()
    width = max((len(i) for i in ids), default=0) + 1
    for exercise_id in ids:
        ex = _load(exercise_id)
        tracks = ", ".join(f"{t} (default)" if t == ex.framework else t for t in ex.tracks)
        console.print(f"[bold]{ex.id:<{width}}[/bold] {ex.title}  [dim]({len(ex.checks)} checks, "
                      f"{ex.max_score:g} points; tracks: {tracks})[/dim]")


@main.command()
@click.argument("exercise_id", metavar="ID")
@_track_option()
def show(exercise_id: str, track: str | None) -> None:
    """Print the statement of exercise ID in --track (spec.md, or the track's own spec_<track>.md).
    Exit code 0, or 2 for an unknown ID or track."""
    ex = _load(exercise_id, track)
    click.echo(f"# {ex.title}  [track: {ex.track}; tracks: {', '.join(ex.tracks)}]\n")
    if not ex.has_track_spec:  # no spec_<track>.md: the default track's text, with what differs at its end
        click.echo(f"> You are on the {ex.track} track. The statement below is written for the "
                   f"{ex.framework} track; the section on tracks at its end says what differs in "
                   f"the {ex.track} track (inputs, outputs, what is forbidden, what is graded).\n")
    click.echo(ex.spec_path.read_text(encoding="utf-8"))


@main.command()
@click.argument("exercise_id", metavar="ID")
@click.argument("directory", required=False, default=".", type=click.Path(file_okay=False, path_type=Path))
@_track_option()
def init(exercise_id: str, directory: Path, track: str | None) -> None:
    """Copy the starting file of exercise ID (in --track) into DIRECTORY (default: here) as ID.py.

    Refuses to overwrite an existing file. Exit code 0, or 2 (unknown ID, existing file, folder that
    cannot be written).
    """
    ex = _load(exercise_id, track)
    target = directory / f"{ex.id}.py"
    if target.exists():
        raise click.UsageError(f"{target} already exists; not overwriting it")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with open(target, "xb") as fh:
            fh.write(ex.stub_path.read_bytes())
    except OSError as exc:
        _fail(f"cannot write {target}: {exc.strerror or exc}")
    click.echo(f"wrote {target} ({ex.track} track); when ready: grade submit {ex.id}{_track_flag(ex)} {target}")


@main.command()
@click.argument("exercise_id", metavar="ID")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the JSON scorecard here (default: scorecards/<ID>-<file stem>.json; with "
                   "--server, scorecards/<ID>-<file stem>.server.json).")
@click.option("--json", "as_json", is_flag=True, help="Print the JSON scorecard instead of the table.")
@click.option("--sandbox", type=click.Choice(BACKENDS), default="auto", show_default=True,
              help="Where the submission runs: docker when ready (auto), or a local rlimited process.")
@click.option("--require-isolation", is_flag=True, help="Refuse to grade without the docker sandbox.")
@click.option("--seed", type=SEED, default=None, help="Seed of the hidden cases, 0 to 2**32-1 (default: random, recorded).")
@click.option("--view", type=click.Choice(["candidate", "interviewer"]), default="candidate", show_default=True,
              help="candidate hides the inputs and numbers of hidden cases; interviewer shows all.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
@click.option("--verbose", "-v", is_flag=True,
              help="Print each check's own message and numbers, not only one line per mistake.")
@click.option("--format", "fmt", type=click.Choice(["gradescope", "junit", "csv", "json"]), default=None,
              help="Also export the result: Gradescope results.json, JUnit XML, CSV, or the scorecard JSON.")
@click.option("--export", "export", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where --format writes (default: results.json, junit.xml, results.csv, scorecards.json).")
@click.option("--server", default=None, metavar="URL",
              help="Interview mode: upload to this grading service (`grade serve`) instead of grading here.")
@click.option("--token", envvar="GRADER_TOKEN", default=None, show_envvar=True,
              help="Your invite token for --server (prefer the environment variable: it stays out of `ps`).")
@_track_option()
def submit(exercise_id: str, file: Path, out: Path | None, as_json: bool, sandbox: str,
           require_isolation: bool, seed: int | None, view: str, quiet: bool, fmt: str | None = None,
           export: Path | None = None, track: str | None = None, server: str | None = None,
           token: str | None = None, verbose: bool = False) -> None:
    """Grade FILE as a solution of exercise ID and write its scorecard.

    The terminal leads with one line per mistake (the checks it explains, the points it cost, the
    greatest difference), then the table of checks; --verbose adds each check's message.

    FILE is a Python file or a Jupyter notebook (.ipynb): its code cells are graded as one file,
    IPython magics and shell escapes removed (said in a note), messages naming cell and line.

    With --server URL --token T the file is graded by an interview-mode service instead: it is
    uploaded, the progress is shown, and the candidate view it returns is printed and written the
    same way, with the same exit codes.

    Exit code 0 when every check passed, 1 when some did not (or the file did not compile, timed out
    or crashed), 2 for a usage error, 3 when the grader itself failed.
    """
    from grader.grading.grade import SubmissionUnreadable, grade_submission  # noqa: PLC0415 - fast --help
    from grader.grading.render import render_scorecard  # noqa: PLC0415
    from grader.grading.scorecard import write_scorecard  # noqa: PLC0415

    from grader.cohort.exports import DEFAULT_EXPORT_NAMES  # noqa: PLC0415
    from grader.grading.scorecard import read_scorecard  # noqa: PLC0415

    if server is not None:
        _submit_remote(exercise_id, file, server=server, token=token, out=out, as_json=as_json, quiet=quiet,
                       verbose=verbose)
    ex = _load(exercise_id, track)
    if not file.is_file():
        raise click.UsageError(f"submission file {file} does not exist" if not file.exists()
                               else f"{file} is not a file")
    # Every output is checked before anything is graded, so a bad path never costs a run.
    out = _writable_file(out or Path("scorecards") / f"{ex.id}-{file.stem}.json", "scorecard")
    if fmt:
        export = _writable_file(export or Path(DEFAULT_EXPORT_NAMES[fmt]), f"{fmt} export")
    err = _console(err=True)
    progress = None if quiet else (lambda msg: err.print(f"[dim]grade: {msg}[/dim]"))
    hint = _track_hint(ex, file)
    if hint:
        err.print(f"grade: note: {hint}")
    try:
        card = grade_submission(ex, file, sandbox=sandbox, seed=seed, require_isolation=require_isolation,
                                progress=progress)
    except SubmissionUnreadable as exc:
        raise click.UsageError(str(exc)) from exc
    shown = card.candidate_view() if view == "candidate" else card
    infra = card.status == Status.INFRASTRUCTURE_ERROR
    if infra:
        try:  # a grader fault never replaces a scorecard that graded this file
            kept = read_scorecard(out).status != Status.INFRASTRUCTURE_ERROR if out.exists() else False
        except Exception:  # noqa: BLE001 - unreadable or not a scorecard: nothing worth keeping
            kept = False
        if kept:
            err.print(f"infrastructure error (not the candidate's fault): {card.status_message}", markup=False)
            err.print(f"the graded scorecard at {out} was kept", markup=False)
            _finish(EXIT_INFRASTRUCTURE)
    try:
        write_scorecard(shown, out)
    except OSError as exc:
        _fail(f"cannot write the scorecard to {out}: {exc.strerror or exc}")
    if fmt and not infra:
        from grader.cohort.exports import export_text  # noqa: PLC0415

        try:
            export.parent.mkdir(parents=True, exist_ok=True)
            export.write_text(export_text(fmt, [(file.stem, card if fmt == "gradescope" else shown)],
                                          scorecard_paths=[str(out)]), encoding="utf-8")
        except OSError as exc:
            _fail(f"cannot write the {fmt} export to {export}: {exc.strerror or exc}")
        err.print(f"[dim]{fmt} export written to {export}[/dim]")
    if as_json:
        click.echo(json.dumps(shown.to_json(), indent=2))
    else:
        render_scorecard(shown, _console(), verbose=verbose)
        err.print(f"[dim]scorecard written to {out}[/dim]")
    if infra:
        err.print(f"infrastructure error (not the candidate's fault): {card.status_message}", markup=False)
        _finish(EXIT_INFRASTRUCTURE)
    _finish(EXIT_ALL_PASSED if card.all_passed else EXIT_FAILURES)


def remote_scorecard_path(exercise_id: str, file: Path) -> Path:
    """Where ``grade submit --server`` writes the service's card by default: beside, not over, the
    practice run's ``scorecards/<ID>-<stem>.json``."""
    return Path("scorecards") / f"{exercise_id}-{file.stem}.server.json"


def _submit_remote(exercise_id: str, file: Path, *, server: str, token: str | None, out: Path | None,
                   as_json: bool, quiet: bool, verbose: bool = False) -> None:
    """``grade submit --server``: upload, wait, print the candidate view; exits with submit's codes."""
    from grader.grading.render import render_scorecard  # noqa: PLC0415
    from grader.grading.scorecard import Scorecard, write_scorecard  # noqa: PLC0415
    from grader.service.client import ClientError, submit_remote  # noqa: PLC0415

    if not token:
        raise click.UsageError("--server needs --token (or GRADER_TOKEN): the token of your invitation")
    if not file.is_file():
        raise click.UsageError(f"submission file {file} does not exist" if not file.exists() else f"{file} is not a file")
    err = _console(err=True)
    progress = None if quiet else (lambda msg: err.print(f"grade: {msg}", markup=False))
    try:
        result = submit_remote(server, token, exercise_id, file, progress=progress)
    except ClientError as exc:
        if exc.usage:
            raise click.UsageError(str(exc)) from exc
        err.print(f"error: {exc}", markup=False)
        sys.exit(EXIT_INFRASTRUCTURE)
    except OSError as exc:
        raise click.UsageError(f"cannot read submission {file}: {exc.strerror or exc}") from exc
    if result.scorecard is None:
        err.print(f"infrastructure error (not the candidate's fault): the service could not grade submission "
                  f"{result.id}", markup=False)
        sys.exit(EXIT_INFRASTRUCTURE)
    card = Scorecard.from_json(result.scorecard)
    # Its own file: the service's candidate view never overwrites a practice run's card of the same file.
    out = out or remote_scorecard_path(exercise_id, file)
    try:
        write_scorecard(card, out)
    except OSError as exc:
        err.print(f"error: cannot write the scorecard to {out}: {exc}", markup=False)
        sys.exit(EXIT_USAGE)
    if as_json:
        click.echo(json.dumps(card.to_json(), indent=2))
    else:
        render_scorecard(card, _console(), verbose=verbose)
        err.print(f"[dim]scorecard written to {out}[/dim]")
    if card.status == Status.INFRASTRUCTURE_ERROR:
        sys.exit(EXIT_INFRASTRUCTURE)
    sys.exit(EXIT_ALL_PASSED if card.all_passed else EXIT_FAILURES)


@main.command()
@click.argument("exercise_ids", metavar="[ID]...", nargs=-1)
@click.option("--sandbox", type=click.Choice(BACKENDS), default=None,
              help="Run the reference, stub and samples in this sandbox (the real path). Default: all "
                   "files of the repository run in this process (the warm path; they are trusted).")
@click.option("--seed", type=SEED, default=1234, show_default=True, help="Seed of the hidden cases.")
@click.option("--seeds", type=click.IntRange(min=1), default=1, show_default=True,
              help="Grade every file at this many seeds (SEED, SEED+1, ...); a score that differs fails.")
@click.option("--json", "as_json", is_flag=True, help="Print the matrix as JSON.")
@_track_option("Only this track (default: every track of each exercise).")
def selfcheck(exercise_ids: tuple[str, ...], sandbox: str | None, seed: int, seeds: int, as_json: bool,
              track: str | None) -> None:
    """Prove exercises grade as intended, in every track: the reference scores full marks, the stub
    scores 0 (status graded), every correct sample scores full marks and gets no diagnosis, every
    wrong sample fails the check its docstring names, every mutant of the mistake bank
    (exercises/ID/mistakes/) fails the checks it names and scores below full marks, every confuser
    (exercises/ID/confusers/: a wrong solution whose symptom matches a hint while its cause is
    another) loses points and gets no name its docstring does not allow, no score depends on the
    seed and no wrong file is given different names at different seeds. Prints diagnosis precision
    on mutants and samples, recall, and precision on confusers. Exit code 0 when all of that holds,
    1 otherwise."""
    from grader.cohort.selfcheck import render_matrix, run_selfcheck  # noqa: PLC0415

    ids = list(exercise_ids) or exercise_ids_all()
    if track:
        exercises = [_load(i, track) for i in ids if exercise_ids or track in _load(i).tracks]
    else:
        exercises = [_load(i, t) for i in ids for t in _load(i).tracks]
    err = _console(err=True)
    rows = run_selfcheck(exercises, sandbox=sandbox, seed=seed, seeds=seeds,
                         progress=lambda msg: err.print(f"[dim]selfcheck: {msg}[/dim]"))
    if as_json:
        click.echo(json.dumps([r.to_json() for r in rows], indent=2))
    else:
        render_matrix(rows, _console())
    if any(r.infrastructure for r in rows):
        sys.exit(EXIT_INFRASTRUCTURE)
    sys.exit(EXIT_ALL_PASSED if all(r.ok for r in rows) else EXIT_FAILURES)


@main.command("new")
@click.argument("exercise_id", metavar="ID")
@click.option("--track", type=click.Choice(TRACKS), required=True,
              help="The exercise's default track: numpy (arrays) or torch (tensors, gradients graded).")
@click.option("--entry", default=None, help="The function the candidate writes (default: ID).")
def new_cmd(exercise_id: str, track: str, entry: str | None) -> None:
    """Scaffold exercise ID (exercise.toml, spec, stub, checks, reference, samples folder) so that
    `grade selfcheck ID` runs at once and says what is still missing; docs/authoring.md explains
    each file."""
    from grader.grading.exercise import project_root  # noqa: PLC0415
    from grader.grading.scaffold import ScaffoldError, scaffold_exercise  # noqa: PLC0415

    root = project_root()
    try:
        written = scaffold_exercise(root, exercise_id, track, entry)
    except ScaffoldError as exc:
        raise click.UsageError(str(exc)) from exc
    for path in written:
        click.echo(f"wrote {path.relative_to(root)}{'/' if path.is_dir() else ''}")
    click.echo(f"next: fill in the TODOs (docs/authoring.md), then: grade selfcheck {exercise_id}")


def exercise_ids_all() -> list[str]:
    """Every exercise id (for commands whose ID argument is optional)."""
    return exercise_ids()


@main.group()
def sandbox() -> None:
    """Build and inspect the Docker sandbox image."""


@sandbox.command("build")
@click.option("--bootstrap-base", is_flag=True,
              help="Make the base locally (debootstrap of Debian bookworm, docker import): no registry needed.")
@click.option("--base", default=None, help="Base image when not bootstrapping (default: python:3.11-slim).")
@click.option("--find-links", multiple=True, help="Where pip also looks for wheels (folder or URL; repeatable).")
@click.option("--index-url", default=None, help="Package index for pip download (e.g. a CPU-only torch index).")
@click.option("--wheelhouse", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder the wheels are downloaded to and kept in.")
@click.option("--mirror", default=None, help="Debian mirror for --bootstrap-base.")
@click.option("--force", is_flag=True, help="Rebuild even when the image is current.")
def sandbox_build(bootstrap_base: bool, base: str | None, find_links: tuple[str, ...], index_url: str | None,
                  wheelhouse: Path | None, mirror: str | None, force: bool) -> None:
    """Build the sandbox image (offline: wheels are downloaded first). Fast when it is current."""
    from grader.sandbox.image import BuildOptions, ImageBuildError, build_image  # noqa: PLC0415

    given = {"base": base, "wheelhouse": wheelhouse, "mirror": mirror}
    options = BuildOptions(bootstrap_base=bootstrap_base, find_links=find_links, index_url=index_url, force=force,
                           **{k: v for k, v in given.items() if v is not None})
    err = _console(err=True)
    try:
        result = build_image(options, progress=lambda msg: err.print(f"[dim]sandbox: {msg}[/dim]", markup=True))
    except ImageBuildError as exc:
        err.print(f"error: {exc}", markup=False)
        sys.exit(EXIT_INFRASTRUCTURE)
    verb = "built" if result.built else "up to date:"
    click.echo(f"{verb} {result.image} {result.image_id} (base {result.base}) in {result.seconds:.1f} s")


@sandbox.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def sandbox_status(as_json: bool) -> None:
    """Say whether an engine is reachable, which image is there, and what --sandbox auto picks."""
    from grader.sandbox.image import sandbox_status as probe  # noqa: PLC0415

    status = probe()
    if as_json:
        click.echo(json.dumps(status.to_json(), indent=2))
        return
    click.echo(f"engine: {status.engine and 'docker ' + status.engine or 'none (' + str(status.engine_error) + ')'}")
    if status.image_id:
        versions = ", ".join(f"{k} {v}" for k, v in (status.versions or {}).items()) or "versions unknown"
        fresh = {True: "current", False: "stale: run `grade sandbox build`", None: "freshness unknown"}[status.current]
        click.echo(f"image: {status.image} {status.image_id} ({versions}; {fresh})")
    else:
        click.echo(f"image: {status.image} not built" + (" (run `grade sandbox build`)" if status.engine else ""))
    click.echo(f"--sandbox auto picks: {status.auto}")
    from grader.sandbox.process import ProcessSandbox  # noqa: PLC0415

    process = ProcessSandbox().info().isolation
    click.echo("process sandbox: " + (f"missing {', '.join(process['missing'])} ({process.get('missing_why', '')}); "
                                      "grade serve --sandbox process needs --insecure-sandbox" if process["missing"]
                                      else "a box per run (own uid, PID, IPC, mount and network namespaces)"))


# -- interviewer tools: batch, review, report (issue 7) ----------------------------------------------

def _load_cards(paths):
    from grader.cohort.review import CardsUnreadable, load  # noqa: PLC0415

    err = _console(err=True)
    try:
        return load(paths, on_skip=lambda note: err.print(f"note: {note}", markup=False))
    except CardsUnreadable as exc:  # one line naming the file and its first problem
        _fail(str(exc))


@main.command("batch")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--exercise", "exercise_id", metavar="ID", default=None,
              help="DIRECTORY is a flat folder of submissions of exercise ID.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Scorecard folder (default: scorecards/batch/<DIRECTORY name>).")
@click.option("--jobs", "-j", type=click.IntRange(min=1, max=256), default=None,
              help="Parallel sandboxes (default: the cores).")
@click.option("--sandbox", type=click.Choice(BACKENDS), default="auto", show_default=True)
@click.option("--require-isolation", is_flag=True, help="Refuse to grade without the docker sandbox.")
@click.option("--seed", type=SEED, default=None,
              help="Hidden-case seed for the whole batch (default: the one recorded in OUT, else random).")
@click.option("--force", is_flag=True, help="Grade again even where a current scorecard exists (and allow a new --seed).")
@click.option("--format", "formats", multiple=True, type=click.Choice(["gradescope", "junit", "csv", "json"]),
              help="Also export: gradescope (OUT/gradescope/<ex>/<candidate>.json), junit (OUT/junit.xml), "
                   "json (OUT/scorecards.json); csv is OUT/summary.csv. Repeatable.")
@click.option("--hidden-visibility", type=click.Choice(["after_published", "hidden"]), default="after_published",
              show_default=True, help="Gradescope visibility of hidden checks.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@_track_option("Grade every submission in this track (default: the track each file's imports name, "
               "torch or numpy, else the exercise's default).")
@click.option("--ray", "ray_address", metavar="ADDRESS", envvar="GRADER_RAY_ADDRESS", default=None,
              help="Grade on a Ray cluster (HOST:PORT, ray://HOST:10001, auto), or 'local' for an embedded Ray "
                   "with --jobs slots. Needs pip install -e '.[ray]'. Env: GRADER_RAY_ADDRESS.")
@click.option("--ray-build-image", is_flag=True,
              help="With --ray and --sandbox docker: a node without the sandbox image builds it instead of being refused.")
@click.option("--warm", type=click.IntRange(min=0), default=1, show_default=True,
              help="Sandboxes each grading process keeps started ahead, NumPy imported (one fresh sandbox per "
                   "submission, the limits and isolation of a cold run, never reused). 0: every run cold. "
                   "Not with --ray.")
@click.option("--warm-torch", type=click.IntRange(min=0), default=None,
              help="The same for torch exercises (torch imported). [default: --warm]")
def batch_cmd(directory: Path, exercise_id: str | None, out: Path | None, jobs: int | None, sandbox: str,
              require_isolation: bool, seed: int | None, force: bool, formats: tuple[str, ...],
              hidden_visibility: str, quiet: bool, track: str | None = None, ray_address: str | None = None,
              ray_build_image: bool = False, warm: int = 1, warm_torch: int | None = None) -> None:
    """Grade every submission under DIRECTORY: DIRECTORY/<candidate>/<exercise>.py,
    DIRECTORY/<exercise>/<candidate>.py, or a flat folder with --exercise.

    Writes one scorecard per submission and OUT/summary.csv; skips submissions whose scorecard is
    current (same file, exercise and grader version) unless --force. The seed is recorded in
    OUT/batch.json and reused when the batch is run again; another --seed needs --force. Exit code 0
    when every submission was graded (whatever its score), 2 for a usage error (nothing to grade,
    bad option, unwritable OUT, a seed other than OUT's), 3 when the grader failed on some (a graded
    scorecard is never replaced by a grader fault), 130 when interrupted (finished scorecards and
    summary.csv are kept).

    With --ray, each submission is a Ray task on a node that advertises the grader_sandbox resource;
    nodes whose grader or exercise files differ from this machine's, or that cannot run the sandbox,
    are refused before anything is graded (exit code 3).
    """
    from grader.cohort.batch import EmptyCohort, SeedConflict, batch, default_jobs  # noqa: PLC0415
    from grader.cohort.executors import make_executor  # noqa: PLC0415
    from grader.cohort.progress import BatchProgress  # noqa: PLC0415
    from grader.sandbox import SandboxUnavailable, select_sandbox  # noqa: PLC0415

    if exercise_id is not None:
        _load(exercise_id, track)
    out = _writable_dir(out or Path("scorecards") / "batch" / directory.resolve().name, "scorecards")
    err = _console(err=True)
    executor = None
    if ray_address:  # the nodes grade: each is checked for its sandbox and versions, not this machine
        from grader.cohort.ray_executor import NodeRefused, RayUnavailable  # noqa: PLC0415 - light: no ray import

        try:
            executor = make_executor(jobs=jobs or default_jobs(), ray=ray_address, sandbox=sandbox,
                                     require_isolation=require_isolation, build_image=ray_build_image)
        except (RayUnavailable, NodeRefused) as exc:
            _fail(str(exc), EXIT_INFRASTRUCTURE)
        err.print(f"grade: grading on Ray ({ray_address}): {len(executor.nodes)} nodes, "
                  f"{executor.capacity} submissions at once", markup=False)
    else:
        try:  # said once, at the top: which sandbox grades this batch, and why
            backend, selection = select_sandbox(sandbox, require_isolation=require_isolation)
        except (SandboxUnavailable, ValueError) as exc:
            _fail(str(exc), EXIT_INFRASTRUCTURE)
        err.print(f"grade: sandbox: {selection}", markup=False)
        if backend.name == "process" and backend.info().isolation.get("user", "").startswith("root"):
            err.print("grade: warning: the process sandbox runs submissions as root here; grade untrusted code "
                      "with --sandbox docker", markup=False)
    try:
        with BatchProgress(err, enabled=not quiet) as bar:
            result = batch(directory, out, exercise=exercise_id, jobs=jobs, sandbox=sandbox, seed=seed,
                           force=force, require_isolation=require_isolation, formats=formats,
                           hidden_visibility=hidden_visibility, on_start=bar.on_start, on_done=bar.on_done, track=track,
                           executor=executor, warm={"numpy": warm, "torch": warm if warm_torch is None else warm_torch})
    except EmptyCohort as exc:
        for path, why in exc.discovery.ignored:
            err.print(f"ignored {path}: {why}", markup=False)
        _fail(str(exc))
    except SeedConflict as exc:
        _fail(str(exc))
    finally:
        if executor is not None:  # batch closes it; this covers a cohort refused before grading
            executor.close()
    for path, why in result.ignored:
        err.print(f"ignored {path}: {why}", markup=False)
    infra = [o for o in result.outcomes if o.status == Status.INFRASTRUCTURE_ERROR]
    graded = sum(1 for o in result.outcomes if not o.skipped)
    click.echo(f"{len(result.outcomes)} submissions ({graded} graded now, {len(result.outcomes) - graded} already "
               f"graded) at seed {result.seed}; summary: {result.summary}")
    for path in result.exports:
        click.echo(f"wrote {path}")
    if result.interrupted:
        err.print("interrupted: finished scorecards and summary.csv are kept; run the same command to resume",
                  markup=False)
        sys.exit(130)
    if infra:
        err.print(f"grader faults on {len(infra)} submissions (not charged): "
                  + ", ".join(str(o.scorecard) for o in infra), markup=False)
        sys.exit(EXIT_INFRASTRUCTURE)


def _exercise_filter(exercise_id: str | None) -> None:
    """An ``--exercise`` filter must name a known exercise (exit 2 naming the known ids)."""
    if exercise_id is not None and exercise_id not in exercise_ids():
        _fail(f"unknown exercise {exercise_id!r} (known: {', '.join(exercise_ids())})")


@main.command("regrade")
@click.argument("directory", metavar="OUT", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--from", "source_root", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="The submissions folder (default: the one OUT/batch.json records).")
@click.option("--jobs", "-j", type=click.IntRange(min=1, max=256), default=None,
              help="Parallel sandboxes (default: the cores).")
@click.option("--sandbox", type=click.Choice(BACKENDS), default="auto", show_default=True)
@click.option("--require-isolation", is_flag=True, help="Refuse to grade without the docker sandbox.")
@click.option("--accept", "accept_tag", metavar="TAG", default=None,
              help="Do not grade: make the scorecards of regrade TAG stand (or 'original'), recorded in batch.json.")
@click.option("--changed-only", is_flag=True, help="List only the submissions whose result changed.")
def regrade_cmd(directory: Path, source_root: Path | None, jobs: int | None, sandbox: str, require_isolation: bool,
                accept_tag: str | None, changed_only: bool) -> None:
    """Regrade the submissions of a `grade batch` output folder OUT with the current grader, at the
    seed OUT/batch.json records, after a fix to the grader or an exercise.

    Both scorecards are kept: the new ones go to OUT/.regrades/<tag>/after/, a copy of those that
    stood to .../before/, and the table of what changed per candidate (score, status, checks that
    changed verdict) is printed and written to .../changes.csv. Nothing that stands changes until
    `grade regrade OUT --accept <tag>` (or `--accept original`). Exit code 0, 2 for a usage error
    (not a batch folder, nothing to regrade, unknown tag), 3 when the grader failed on some, 130
    when interrupted.
    """
    from grader.cohort.batch import default_jobs  # noqa: PLC0415
    from grader.cohort.regrade import RegradeRefused, accept, regrade_batch, render_changes  # noqa: PLC0415

    if accept_tag is not None:
        try:
            written = accept(directory, accept_tag)
        except RegradeRefused as exc:
            _fail(str(exc))
        click.echo(f"{accept_tag} stands in {directory}: {len(written)} scorecards replaced (the ones they replaced "
                   f"are kept under {directory}/.regrades); summary.csv rewritten")
        return
    err = _console(err=True)
    try:
        result = regrade_batch(directory, source_root=source_root, jobs=jobs or default_jobs(), sandbox=sandbox,
                               require_isolation=require_isolation)
    except RegradeRefused as exc:
        _fail(str(exc))
    render_changes(result.changes, _console(), only_changed=changed_only)
    for label, why in result.not_regraded:
        err.print(f"not regraded {label}: {why}", markup=False)
    changed = sum(1 for c in result.changes if c.changed)
    click.echo(f"regrade {result.tag}: {len(result.changes)} submissions regraded at seed {result.seed}, "
               f"{changed} changed; table: {result.folder / 'changes.csv'}")
    click.echo(f"the scorecards that stood still stand; to make the new ones stand: "
               f"grade regrade {directory} --accept {result.tag}")
    if result.interrupted:
        sys.exit(130)
    if any(c.status_after == Status.INFRASTRUCTURE_ERROR for c in result.changes):
        err.print("grader faults on some submissions (not charged): see the table", markup=False)
        sys.exit(EXIT_INFRASTRUCTURE)


@main.command("similarity")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--exercise", "exercise_id", metavar="ID", default=None,
              help="DIRECTORY is a flat folder of submissions of exercise ID.")
@click.option("--against", "extra", multiple=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A folder of known sources to compare every submission with (repeatable).")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=None,
              help="Flag pairs at or above this score (default 0.75).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=Path("similarity.html"),
              show_default=True, help="The HTML page: ranked pairs and side-by-side views.")
@click.option("--json", "as_json", is_flag=True, help="Print the pairs as JSON instead of the table.")
@click.option("--top", type=click.IntRange(min=1), default=20, show_default=True, help="Pairs listed and shown side by side.")
def similarity_cmd(directory: Path, exercise_id: str | None, extra: tuple[Path, ...], threshold: float | None,
                   output: Path, as_json: bool, top: int) -> None:
    """Rank the pairs of submissions under DIRECTORY (grade batch's layouts) that share the most code,
    with each other and with the sources a candidate can find (references, samples, the bank of
    mistakes, --against folders); names, comments, docstrings and layout are normalised and the stub
    never counts. A flag for a person to read, never a verdict. Exit code 0, or 2 for a usage error.
    """
    from grader.cohort.similarity import DISCLAIMER, THRESHOLD, render_html, similarity_of_folder  # noqa: PLC0415

    if exercise_id is not None:
        _load(exercise_id)
    output = _writable_file(output, "similarity page")
    threshold = THRESHOLD if threshold is None else threshold
    pairs = similarity_of_folder(directory, exercise=exercise_id, extra=extra, threshold=threshold)
    if not pairs:
        _fail(f"nothing to compare in {directory} (layouts: DIR/<candidate>/<exercise>.py, DIR/<exercise>/<candidate>.py, "
              f"or a flat folder with --exercise ID)")
    try:
        output.write_text(render_html(pairs, title=f"Similarity: {directory.name}", shown=top, threshold=threshold),
                          encoding="utf-8")
    except OSError as exc:
        _fail(f"cannot write the similarity page to {output}: {exc.strerror or exc}")
    if as_json:
        click.echo(json.dumps([p.to_json() for p in pairs], indent=2))
        return
    console = _console()
    console.print(DISCLAIMER, markup=False)
    for p in pairs[:top]:
        flag = "FLAG" if p.flagged else "    "
        console.print(f"{flag} {p.score:.2f}  {p.exercise}  {p.a}  ~  {p.b}  ({p.kind})", markup=False)
    flagged = sum(1 for p in pairs if p.flagged)
    click.echo(f"{len(pairs)} pairs, {flagged} flagged at {threshold:.2f} or above; side by side: {output}")


@main.command("review")
@click.argument("scorecards", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--failed-only", is_flag=True, help="Only submissions and checks that did not pass.")
@click.option("--exercise", "exercise_id", metavar="ID", default=None, help="Only scorecards of exercise ID.")
@click.option("--diff", is_flag=True, help="Show what changed from the first scorecard to the second.")
def review_cmd(scorecards: tuple[Path, ...], failed_only: bool, exercise_id: str | None, diff: bool) -> None:
    """Show scorecards side by side: submissions x checks, verdict glyphs, scores.

    Each CARD is a scorecard, a folder of them (e.g. a `grade batch` output folder) or a `--format
    json` export. With --diff and two scorecards A B: what changed between two attempts. Exit code 0,
    or 2 (a CARD that is no scorecard, an unknown --exercise, --diff without two cards).
    """
    from grader.cohort.review import diff_scorecards, render_diff, render_review, review_tables  # noqa: PLC0415

    _exercise_filter(exercise_id)
    cards = _load_cards(scorecards)
    if diff:
        if len(cards) != 2:
            raise click.UsageError("--diff compares exactly two scorecards: A (before) and B (after)")
        if cards[0][1].exercise["id"] != cards[1][1].exercise["id"]:
            raise click.UsageError(f"--diff compares two attempts at one exercise; got "
                                   f"{cards[0][1].exercise['id']} and {cards[1][1].exercise['id']}")
        render_diff(diff_scorecards(cards[0], cards[1]), _console())
        return
    render_review(review_tables(cards, exercise=exercise_id, failed_only=failed_only), _console())


@main.command("report")
@click.argument("scorecards", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path), default=Path("report.html"),
              show_default=True, help="Where to write the HTML file.")
@click.option("--title", default="Attention exercises: grading report", show_default=True,
              help="The page title and heading of the report.")
def report_cmd(scorecards: tuple[Path, ...], output: Path, title: str) -> None:
    """Write one self-contained HTML report (cohort summary, every check, heatmaps, probe plots).

    Each CARD is a scorecard, a folder of them or a `--format json` export (a batch's batch.json among
    them is skipped with a note). Exit code 0, or 2 (a CARD that is no scorecard, an OUTPUT that
    cannot be written or whose folder does not exist; nothing is written then).
    """
    from grader.cohort.report import write_report  # noqa: PLC0415

    if not output.absolute().parent.is_dir():  # a mistyped folder is an error, never made for it
        _fail(f"cannot write the report to {output}: the folder {output.parent} does not exist")
    output = _writable_file(output, "report")
    cards = _load_cards(scorecards)
    try:
        path = write_report(cards, output, title=title)
    except OSError as exc:
        _fail(f"cannot write the report to {output}: {exc.strerror or exc}")
    click.echo(f"wrote {path}")


# -- interview mode (issue 13) ----------------------------------------------------------------------

@main.command("serve")
@click.option("--db", "db_url", default="sqlite:///grader-service.db", show_default=True,
              help="Database URL: sqlite:///PATH or postgresql://USER@HOST/DB (psycopg 3).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--workers", type=click.IntRange(min=0), default=1, show_default=True,
              help="Submissions graded at once here (one sandbox each); 0: none here, `grade worker` "
                   "processes on other machines grade.")
@click.option("--sandbox", type=click.Choice(["docker", "process"]), default="docker", show_default=True,
              help="docker (isolated; the image must be built) or process (development only: every page warns).")
@click.option("--max-upload-bytes", type=click.IntRange(min=1), default=256 * 1024, show_default=True,
              help="Size cap of one submitted file.")
@click.option("--rate-limit", type=click.IntRange(min=1), default=30, show_default=True,
              help="Submissions per candidate per minute.")
@click.option("--warm", type=click.IntRange(min=0), default=1, show_default=True,
              help="Sandboxes each worker keeps started ahead, NumPy imported (containers with docker, "
                   "processes with --sandbox process; one per submission, never reused). 0: none.")
@click.option("--warm-torch", type=click.IntRange(min=0), default=None,
              help="The same for torch exercises (torch imported). [default: --warm]")
@click.option("--lease", "lease_s", type=click.FloatRange(min=1.0), default=20.0, show_default=True,
              help="Seconds a claim of this server's workers holds without a heartbeat.")
@click.option("--insecure-sandbox", is_flag=True,
              help="With --sandbox process: start even where the process sandbox cannot give every run its "
                   "full box (own uid, PID, IPC, mount and network namespaces, private /tmp, /run, /dev/shm). "
                   "Without it the server refuses to start then; it starts without it only when every "
                   "protection is in force.")
def serve_cmd(db_url: str, host: str, port: int, workers: int, sandbox: str, max_upload_bytes: int,
              rate_limit: int, warm: int, warm_torch: int | None, lease_s: float, insecure_sandbox: bool = False) -> None:
    """Run the interview-mode grading service (JSON API and web pages on uvicorn).

    Needs GRADER_INTERVIEWER_TOKEN (at least 16 characters) in the environment; it is removed from
    the environment once read, so no child process inherits it. Migrates the database at start and
    registers itself as the server every `grade worker` must agree with; submissions a killed
    server or worker left running are re-queued when their lease ends.
    """
    import os  # noqa: PLC0415

    token = os.environ.pop("GRADER_INTERVIEWER_TOKEN", "")
    if len(token) < 16:
        raise click.UsageError("set GRADER_INTERVIEWER_TOKEN to a secret of at least 16 characters "
                               "(e.g. `export GRADER_INTERVIEWER_TOKEN=$(python3 -c 'import secrets; "
                               "print(secrets.token_urlsafe(32))')`); the server refuses to start without it")
    err = _console(err=True)
    if workers:
        _check_service_sandbox(sandbox, err, insecure_sandbox)
    import uvicorn  # noqa: PLC0415

    from grader.service.app import Settings, create_app  # noqa: PLC0415

    try:
        app = create_app(Settings(db_url=db_url, interviewer_token=token, sandbox=sandbox, workers=workers,
                                  max_source_bytes=max_upload_bytes, max_body_bytes=max_upload_bytes * 2 + 65536,
                                  rate_limit=rate_limit, warm_numpy=warm,
                                  warm_torch=warm if warm_torch is None else warm_torch, lease_s=lease_s))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    uvicorn.run(app, host=host, port=port, log_level="info")


def _check_service_sandbox(sandbox: str, err: Console, insecure_sandbox: bool = False) -> None:
    """Exit 3 when the docker sandbox is not ready, or when the process sandbox cannot give every run
    its full box and ``insecure_sandbox`` was not given; warn about the process sandbox."""
    if sandbox == "docker":
        from grader.sandbox.docker import DockerSandbox  # noqa: PLC0415

        backend, why = DockerSandbox.if_ready()
        if backend is None:
            err.print(f"error: the docker sandbox is not ready ({why}); run `grade sandbox build`, or pass "
                      "--sandbox process for development", markup=False)
            sys.exit(EXIT_INFRASTRUCTURE)
    else:
        from grader.sandbox.process import ProcessSandbox  # noqa: PLC0415

        process = ProcessSandbox()
        missing = process.missing
        if missing and not insecure_sandbox:
            err.print(f"error: the process sandbox cannot isolate runs here: missing {', '.join(missing)} "
                      f"({process.info().isolation.get('missing_why', '')}); use --sandbox docker, or pass "
                      "--insecure-sandbox to serve anyway (development only)", markup=False)
            sys.exit(EXIT_INFRASTRUCTURE)
        err.print("warning: --sandbox process grades without a container (shared kernel); "
                  + (f"its runs lack {', '.join(missing)}: do not use it for untrusted code" if missing
                     else "each run has its own box (uid, PID, IPC, mount and network namespaces)"), markup=False)


@main.command("worker")
@click.option("--db", "db_url", required=True,
              help="The server's database: postgresql://USER@HOST/DB (psycopg 3), or sqlite:///PATH when "
                   "the server runs on this machine.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Submissions graded at once (one grading process and sandbox each).")
@click.option("--sandbox", type=click.Choice(["docker", "process"]), default="docker", show_default=True,
              help="docker (isolated; the image must be built here) or process (development only).")
@click.option("--warm", type=click.IntRange(min=0), default=1, show_default=True,
              help="Sandboxes each grading process keeps started ahead, NumPy imported. 0: none.")
@click.option("--warm-torch", type=click.IntRange(min=0), default=None,
              help="The same for torch exercises (torch imported). [default: --warm]")
@click.option("--lease", "lease_s", type=click.FloatRange(min=1.0), default=20.0, show_default=True,
              help="Seconds a claim holds without a heartbeat (one every quarter of it): a worker lost for "
                   "longer has its submissions graded by another.")
@click.option("--poll", "poll_s", type=click.FloatRange(min=0.05), default=1.0, show_default=True,
              help="Seconds between looks at an empty queue.")
@click.option("--grace", "grace_s", type=click.FloatRange(min=0.0), default=60.0, show_default=True,
              help="On SIGTERM or Ctrl-C: seconds to finish the gradings in hand before giving them back "
                   "to the queue (a second Ctrl-C gives them back at once).")
@click.option("--insecure-sandbox", is_flag=True,
              help="With --sandbox process: start even where the process sandbox cannot give every run its "
                   "full box (as for `grade serve`); without it the worker refuses to start then.")
def worker_cmd(db_url: str, jobs: int, sandbox: str, warm: int, warm_torch: int | None, lease_s: float,
               poll_s: float, grace_s: float, insecure_sandbox: bool = False) -> None:
    """Grade interview-mode submissions from a `grade serve` database, on this machine.

    Run any number, on any machines that reach the database, next to `grade serve --workers 0` (or a
    server with its own workers): they claim from one queue (each submission graded once), each
    with its own warm pool and reference cache. A worker refuses to start, naming what differs,
    unless its grader, Python, NumPy and torch versions and exercise files equal the server's.
    Heartbeats hold its claims; a worker killed or cut off for longer than --lease has its
    submissions graded by another, and a late result of the lost one is discarded.

    Exit code 0 after a clean stop (SIGTERM or Ctrl-C), 2 usage error, 3 refused by the server or
    the sandbox not ready.
    """
    import logging  # noqa: PLC0415

    from grader.service.fleet import run_worker  # noqa: PLC0415

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    err = _console(err=True)
    _check_service_sandbox(sandbox, err, insecure_sandbox)
    try:
        code = run_worker(db_url, jobs=jobs, sandbox=sandbox,
                          warm={"numpy": warm, "torch": warm if warm_torch is None else warm_torch},
                          lease_s=lease_s, poll_s=poll_s, grace_s=grace_s,
                          say=lambda line: click.echo(line, err=True))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()
