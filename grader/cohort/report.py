"""``grade report``: one self-contained HTML file for a cohort of scorecards.

The page (``grader/templates/report.html.j2``, Jinja2 with autoescaping: messages and captured
output are the candidates' text) has inline CSS, no scripts and no external resources; its plots
are SVG data URIs from ``grader.cohort.plots``. Sections: a cohort summary (score distribution, per-check
pass rate per exercise, each candidate's total across exercises), then every submission: its mistakes
first (one line each, ``Scorecard.mistakes``), then its checks, each check's full message and numbers
behind a toggle (passed checks show none unless opened), heatmaps of
attention weights where the scorecard carries them (``artifacts.heatmaps``), and a log-log plot for
every series found in a check's details (complexity probes).
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import jinja2

from grader import __version__
from grader.cohort import plots
from grader.grading.render import clip
from grader.grading.scorecard import Scorecard

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
#: Details keys shown as numbers (the rest of a check's details are shown as compact JSON).
MAX_DETAIL_CHARS = 400


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text).strip("-").lower() or "x"


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, dict)):
        text = json.dumps(value, separators=(", ", ": "), default=str)
    else:
        text = str(value)
    return text if len(text) <= MAX_DETAIL_CHARS else text[:MAX_DETAIL_CHARS] + " …"


def detail_rows(details: dict, prefix: str = "", depth: int = 4) -> list[tuple[str, str]]:
    """A check's numbers as ``(name, value)`` rows for a small table: nested dicts are flattened to
    dotted names (``output.tolerance.rtol``) down to ``depth`` levels, floats shown with 4
    significant digits, short lists of scalars inline; the top-level ``case`` (shown apart) is left out.
    """
    rows = []
    for key, value in details.items():
        if not prefix and key == "case":
            continue
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value and depth > 1:
            rows += detail_rows(value, f"{name}.", depth - 1)
        elif isinstance(value, (list, tuple)) and value and len(value) <= 12 and all(
                isinstance(v, (int, float, str, bool)) or v is None for v in value):
            rows.append((name, ", ".join(_short(v) for v in value)))
        else:
            rows.append((name, _short(value)))
    return rows


def _cohort(cards: Sequence[tuple[str, Scorecard]]) -> dict:
    by_exercise: dict[str, list[Scorecard]] = defaultdict(list)
    for _label, card in cards:
        by_exercise[card.exercise["id"]].append(card)
    exercises = []
    percentages = {}
    for ex, group in sorted(by_exercise.items()):
        pct = [100.0 * c.score / c.max_score if c.max_score else 0.0 for c in group]
        percentages[ex] = pct
        order: list[str] = []
        passed: dict[str, int] = defaultdict(int)
        seen: dict[str, int] = defaultdict(int)
        for c in group:
            for check in c.checks:
                if check.id not in order:
                    order.append(check.id)
                seen[check.id] += 1
                passed[check.id] += check.verdict == "passed"
        rates = [(cid, passed[cid] / seen[cid]) for cid in order]
        exercises.append({
            "id": ex, "title": group[0].exercise.get("title", ex), "count": len(group),
            "mean": statistics.fmean(pct), "median": statistics.median(pct),
            "full": sum(1 for c in group if c.all_passed),
            "statuses": dict(sorted(_count(c.status for c in group).items())),
            "max_score": group[0].max_score,
            "pass_rate_plot": plots.pass_rates(f"{ex}: passed per check", rates) if rates else None,
        })
    return {"exercises": exercises,
            "distribution_plot": plots.score_distribution(percentages) if percentages else None}


def _count(values) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for v in values:
        counts[v] += 1
    return counts


def _submission(label: str, card: Scorecard, index: int) -> dict:
    checks = []
    for c in card.checks:
        probe_plots = [p for p in (plots.loglog(s, f"{c.id}: {s['name']} vs {s['x']}")
                                   for s in plots.find_series(c.details)) if p]
        checks.append({"id": c.id, "title": c.title, "category": c.category, "visibility": c.visibility,
                       "verdict": c.verdict, "points": c.points, "max_points": c.max_points,
                       "message": c.message, "summary": c.summary, "case": c.details.get("case"), "numbers": detail_rows(c.details),
                       "plots": probe_plots})
    heatmaps = []
    for h in (card.artifacts or {}).get("heatmaps", []):
        heatmaps.append({**{k: h[k] for k in ("check", "case", "output", "shape", "slice")},
                         "plot": plots.heatmap(h["candidate"], h["reference"])})
    return {"anchor": f"s{index}-{_slug(label)}", "label": label, "card": card, "checks": checks,
            "heatmaps": heatmaps, "artifacts_error": (card.artifacts or {}).get("error"),
            "percent": 100.0 * card.score / card.max_score if card.max_score else 0.0}


def candidate_totals(cards: Sequence[tuple[str, Scorecard]]) -> list[dict]:
    """Each candidate's total across exercises: ``{"label", "score", "max_score", "percent",
    "exercises": [{"id", "score", "max_score"}]}``, best first. A candidate is a label (a scorecard's
    file stem: ``grade batch`` writes ``OUT/<exercise>/<candidate>.json``; the service labels by name)."""
    totals: dict[str, dict] = {}
    for label, card in cards:
        who = label
        t = totals.setdefault(who, {"label": who, "score": 0.0, "max_score": 0.0, "exercises": []})
        t["score"] += card.score
        t["max_score"] += card.max_score
        t["exercises"].append({"id": card.exercise["id"], "score": card.score, "max_score": card.max_score})
    for t in totals.values():
        t["percent"] = 100.0 * t["score"] / t["max_score"] if t["max_score"] else 0.0
    return sorted(totals.values(), key=lambda t: (-t["percent"], t["label"]))


def render_report(cards: Sequence[tuple[str, Scorecard]], *, title: str = "Attention exercises: grading report") -> str:
    """The HTML text of the report for ``(label, scorecard)`` pairs."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["clip"] = clip
    ordered = sorted(cards, key=lambda lc: (lc[1].exercise["id"], -lc[1].score, lc[0]))
    return env.get_template("report.html.j2").render(
        title=title, generated=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        grader_version=__version__, cohort=_cohort(ordered), candidates=candidate_totals(ordered),
        submissions=[_submission(label, card, i) for i, (label, card) in enumerate(ordered)])


def write_report(cards: Sequence[tuple[str, Scorecard]], out: Path, **kwargs) -> Path:
    """Render the report and write it to ``out``."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_report(cards, **kwargs), encoding="utf-8")
    return out
