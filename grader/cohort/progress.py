"""The progress bar of ``grade batch`` (rich): done / total, how many passed, failed, or hit a grader
fault, how many were skipped as already graded, elapsed time and ETA."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

from grader.cohort.batch import BatchOutcome
from grader.judge.verdicts import Status


class BatchProgress:
    """Context manager whose ``on_start``/``on_done`` are ``run_batch``'s callbacks."""

    def __init__(self, console: Console, *, enabled: bool = True):
        self.counts = {"passed": 0, "failed": 0, "infra": 0, "skipped": 0}
        self._progress = Progress(
            TextColumn("[bold]grading[/bold]"), BarColumn(), MofNCompleteColumn(),
            TextColumn("[green]{task.fields[passed]} ok[/green] [red]{task.fields[failed]} failed[/red] "
                       "[magenta]{task.fields[infra]} infra[/magenta] [dim]{task.fields[skipped]} "
                       "skipped[/dim]"),
            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
            console=console, disable=not enabled, transient=False)
        self._task = None

    def __enter__(self) -> "BatchProgress":
        return self

    def __exit__(self, *exc) -> None:
        if self._task is not None:
            self._progress.stop()

    def _ensure(self) -> None:
        """Show the bar at the first event, so a batch refused before grading prints no bar."""
        if self._task is None:
            self._progress.start()
            self._task = self._progress.add_task("batch", total=None, **self.counts)

    def on_start(self, todo: int) -> None:
        """The number of submissions to grade is known (already graded ones were skipped)."""
        self._ensure()
        self._progress.update(self._task, total=todo, completed=0)

    def on_done(self, outcome: BatchOutcome) -> None:
        """One submission finished (or was skipped as current)."""
        self._ensure()
        if outcome.skipped:
            self.counts["skipped"] += 1
        elif outcome.status == Status.INFRASTRUCTURE_ERROR:
            self.counts["infra"] += 1
        elif outcome.all_passed:
            self.counts["passed"] += 1
        else:
            self.counts["failed"] += 1
        self._progress.update(self._task, advance=0 if outcome.skipped else 1, **self.counts)
