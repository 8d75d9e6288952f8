"""Terminal rendering of scorecards and self-check matrices (rich tables; no logic)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from grader.grading.scorecard import Scorecard

GLYPHS = {
    "passed": ("PASS", "green"),
    "failed": ("FAIL", "red"),
    "error": ("ERROR", "red"),
    "timeout": ("TIMEOUT", "yellow"),
    "memory_limit": ("MEMORY", "yellow"),
    "forbidden": ("FORBIDDEN", "magenta"),
    "skipped": ("SKIP", "dim"),
}


def verdict_text(verdict: str) -> Text:
    """A coloured verdict label."""
    label, style = GLYPHS.get(verdict, (verdict.upper(), ""))
    return Text(label, style=style)


def render_scorecard(card: Scorecard, console: Console) -> None:
    """Print a scorecard as a table of checks, then the messages of those that did not pass."""
    ex = card.exercise
    console.print(f"[bold]{ex['title']}[/bold] ({ex['id']} {ex['version']}) - {card.submission['path']}")
    table = Table(show_lines=False)
    table.add_column("check")
    table.add_column("category")
    table.add_column("verdict")
    table.add_column("points", justify="right")
    for c in card.checks:
        name = c.id + (" (hidden)" if c.visibility == "hidden" else "")
        table.add_row(name, c.category, verdict_text(c.verdict), f"{c.points:g}/{c.max_points:g}")
    console.print(table)
    notebook = card.submission.get("notebook")
    if notebook:  # a .ipynb: which cells were graded and what IPython syntax was left out
        console.print(Text(f"note: {notebook['note']}", style="dim"))
    for c in card.checks:
        if c.message and (c.verdict != "passed" or "interviewer_flag" in c.details):
            console.print(Text(f"{c.id}: ", style="bold") + Text(c.message))
            case = c.details.get("case")
            if case:
                console.print(Text(f"  case: {case}", style="dim"))
    status_style = "green" if card.all_passed else ("red" if card.status != "graded" else "yellow")
    sandbox = card.sandbox.get("backend")
    console.print(Text(f"status: {card.status}   score: {card.score:g} / {card.max_score:g}   "
                       f"sandbox: {sandbox}   time: {card.duration_s:.1f} s", style=status_style))
    if card.status_message and card.status != "graded" or (card.status_message and card.score == 0):
        console.print(Text(card.status_message))
    if card.output.get("text"):
        text = card.output["text"]
        shown = text[-2000:]
        console.print(Text("captured output" + (" (truncated)" if card.output.get("truncated") or len(text) > 2000
                                                else "") + ":", style="dim"))
        console.print(Text(shown.replace("\x1b", "\\x1b").replace("\x00", "\\x00")), markup=False)
