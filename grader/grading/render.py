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


def _safe(text: str) -> str:
    """Control characters a submission may have put in a message, shown instead of obeyed."""
    return text.replace("\x1b", "\\x1b").replace("\x00", "\\x00")


def clip(text: str, limit: int = 2000) -> str:
    """``text`` cut to about ``limit`` characters: its head (ending at a line or word) and its tail
    (starting at one) around a line saying how much was left out; whole when it fits. Long output
    never opens mid-word, and what was printed first (at import) stays in view."""
    if len(text) <= limit:
        return text
    half = max(1, limit // 2)

    def boundary(part: str, from_end: bool) -> int:
        for sep in ("\n", " "):
            i = part.rfind(sep) if from_end else part.find(sep)
            if i >= 0 and (len(part) - i if not from_end else i) > len(part) // 2:
                return i
        return -1

    head, tail = text[:half], text[-half:]
    end = boundary(head, True)
    head = head[:end + 1] if end >= 0 else head
    start = boundary(tail, False)
    tail = tail[start + 1:] if start >= 0 else tail
    left_out = len(text) - len(head) - len(tail)
    return f"{head.rstrip()}\n[... {left_out} characters not shown ...]\n{tail}"


def _check_list(ids: list, limit: int = 6) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def render_mistakes(card: Scorecard, console: Console) -> None:
    """One line per mistake of ``card.mistakes`` (most points first): the message, the checks it
    explains and the points it cost, and below it the one representative difference (the greatest,
    with its index, got/expected and tolerance)."""
    if not card.mistakes:
        return
    console.print(Text("mistakes:", style="bold"))
    for m in card.mistakes:
        label = f" [{m['name']}]" if m.get("name") else ""
        lines = m["message"].splitlines() or [""]
        console.print(Text("  x ", style="red") + Text(_safe(lines[0]), style="bold") + Text(label, style="dim"))
        for line in lines[1:]:  # a compile error's source line and caret
            console.print(Text("    " + _safe(line)), markup=False)
        n = len(m["checks"])
        console.print(Text(f"    {n} check{'s' if n != 1 else ''}, -{m['points_lost']:g} point"
                           f"{'s' if m['points_lost'] != 1 else ''}: {_check_list(m['checks'])}", style="dim"))
        diff = m.get("difference")
        if diff:
            console.print(Text(f"    {_safe(diff['text'])} ({diff['check']}"
                               + (f"; {_safe(str(diff['case']))}" if diff.get("case") else "") + ")", style="dim"))


def render_scorecard(card: Scorecard, console: Console, *, verbose: bool = False) -> None:
    """Print a scorecard: the mistakes first (one line each), then the table of checks; each check's
    own message only with ``verbose`` (and, always, notes on checks that did not cost points: an
    interviewer's flag, a probe that could not judge)."""
    ex = card.exercise
    console.print(f"[bold]{ex['title']}[/bold] ({ex['id']} {ex['version']}) - ", end="")
    console.print(Text(_safe(card.submission["path"])))
    render_mistakes(card, console)
    said = {m["message"] for m in card.mistakes}
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
        flagged = "interviewer_flag" in c.details
        if not c.message or not (flagged or c.verdict != "passed"):
            continue
        if not verbose and c.deducted and not flagged:
            continue  # its mistake's headline said it
        console.print(Text(f"{c.id}: ", style="bold") + Text(_safe(c.message)))
        case = c.details.get("case")
        if case:
            console.print(Text(f"  case: {_safe(str(case))}", style="dim"))
    if not verbose and any(c.deducted for c in card.checks):
        console.print(Text("(each check's message and numbers: --verbose)", style="dim"))
    status_style = "green" if card.all_passed else ("red" if card.status != "graded" else "yellow")
    sandbox = card.sandbox.get("backend")
    console.print(Text(f"status: {card.status}   score: {card.score:g} / {card.max_score:g}   "
                       f"sandbox: {sandbox}   time: {card.duration_s:.1f} s", style=status_style))
    if card.status_message and card.status_message.strip() not in said and (
            card.status != "graded" or card.score == 0):
        console.print(Text(_safe(card.status_message)))
    if card.output.get("text"):
        text = card.output["text"]
        console.print(Text("captured output" + (" (truncated)" if card.output.get("truncated") or len(text) > 2000
                                                else "") + ":", style="dim"))
        console.print(Text(_safe(clip(text, 2000))), markup=False)
