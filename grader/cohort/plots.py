"""Plots for the HTML report, drawn with matplotlib's Agg backend and returned as SVG data URIs.

Every function returns a ``data:`` URI for an ``<img src>`` (SVG for charts, PNG for heatmaps, which
are raster data anyway): the report stays one file, needs no network, and figures cannot clash with
each other's SVG ids.

The complexity plot reads generic keys (``find_series``), so probes added later are plotted without
changes here: any dict in a check's details that has ``sizes`` (two or more numbers) and other lists
of numbers of the same length (``candidate``, ``reference``, ...) is a series.
"""

from __future__ import annotations

import base64
import io
import math
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")  # before pyplot: no display, no GUI toolkit
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter  # noqa: E402
import numpy as np  # noqa: E402

plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "axes.spines.top": False,
                     "axes.spines.right": False, "svg.hashsalt": "grade-report"})

PASS, FAIL, NEUTRAL = "#2e7d32", "#c62828", "#546e7a"
SERIES_KEY = "sizes"
PREFERRED = ("candidate", "reference")
#: The difference panel's colour scale never spans less than this: float rounding stays white.
DIFF_SCALE_FLOOR = 0.05


def _png_uri(fig, dpi: int = 80, tight: bool = True) -> str:
    """Raster plots (heatmaps) as PNG: a fraction of the size of the same image inside an SVG."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight" if tight else None)
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _data_uri(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue().encode("utf-8")).decode("ascii")


#: Exercise colours (matplotlib's tab10): one per exercise, the same on every page.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")


def exercise_colour(exercise_id: str) -> str:
    """The colour of an exercise in every plot (the report's and the cohort page's alike): its place
    among the repository's exercises, by name, so it never depends on which exercises a page shows
    or in what order; an id not in the repository gets one from a hash of its name."""
    from grader.grading.exercise import exercise_ids  # noqa: PLC0415 - plots stay importable alone

    try:
        known = exercise_ids()
    except OSError:
        known = []
    if exercise_id in known:
        return PALETTE[known.index(exercise_id) % len(PALETTE)]
    return PALETTE[int.from_bytes(exercise_id.encode("utf-8")[:8].ljust(8, b"\0"), "big") % len(PALETTE)]


def score_distribution(percentages: dict[str, Sequence[float]]) -> str:
    """Histogram of scores (percent of the maximum), stacked by exercise, each in its
    ``exercise_colour``; the stack order is by exercise id."""
    return _data_uri(score_distribution_figure(percentages))


def score_distribution_figure(percentages: dict[str, Sequence[float]]):
    """The figure of ``score_distribution`` (tests read its colours)."""
    fig, ax = plt.subplots(figsize=(6.4, 2.6))
    bins = np.linspace(0, 100, 11)
    labels = sorted(percentages)
    ax.hist([list(percentages[k]) for k in labels], bins=bins, stacked=True, label=labels, edgecolor="white",
            color=[exercise_colour(k) for k in labels])
    ax.set_xlabel("score (% of maximum)")
    ax.set_ylabel("submissions")
    ax.set_xlim(0, 100)
    ax.yaxis.get_major_locator().set_params(integer=True)
    if len(labels) > 1:
        ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def pass_rates(title: str, rates: Sequence[tuple[str, float]]) -> str:
    """Horizontal bars: the share of submissions that passed each check."""
    fig, ax = plt.subplots(figsize=(6.4, 0.28 * len(rates) + 0.9))
    names = [n for n, _ in rates][::-1]
    values = [100 * r for _, r in rates][::-1]
    colors = [PASS if v >= 99.999 else (FAIL if v <= 0.001 else NEUTRAL) for v in values]
    ax.barh(names, values, color=colors)
    ax.set_xlim(0, 100)
    ax.set_xlabel("passed (% of submissions)")
    ax.set_title(title, loc="left", fontsize=9)
    for y, v in enumerate(values):
        ax.text(min(v + 1, 92), y, f"{v:.0f}%", va="center", fontsize=7)
    return _data_uri(fig)


#: Colour of a cell whose value is NaN or infinite (matplotlib draws those transparent: white, like a pass).
NOT_FINITE = "#000000"


def heatmap_figure(candidate: Sequence[Sequence[float | None]], reference: Sequence[Sequence[float | None]],
                   title: str = ""):
    """The figure of ``heatmap`` (tests read its panels' data and titles).

    A candidate cell that is not finite (NaN, inf, or null in the scorecard) is drawn black in the
    candidate and difference panels, and the difference panel's title counts those cells: a NaN result
    must never read as a white panel titled "max 0".
    """
    cand = np.array([[np.nan if v is None else v for v in row] for row in candidate], dtype=float)
    ref = np.array([[np.nan if v is None else v for v in row] for row in reference], dtype=float)
    diff = cand - ref
    bad = int((~np.isfinite(cand)).sum())
    biggest = float(np.nanmax(np.abs(diff))) if np.isfinite(diff).any() else float("nan")
    vmax = max(DIFF_SCALE_FLOOR, biggest) if math.isfinite(biggest) else 1.0  # rounding noise stays white
    if bad:
        diff_title = (f"difference: {bad} of {cand.size} not finite"
                      + (f", max {biggest:.2g} elsewhere" if math.isfinite(biggest) else ""))
    else:
        diff_title = f"difference (max {biggest:.2g})"
    fig, axes = plt.subplots(1, 3, figsize=(6.6, 2.3))
    panels = ((cand, "candidate (0 to 1)" + (", black: not finite" if bad else ""), "viridis", 0.0, 1.0),
              (ref, "reference (0 to 1)", "viridis", 0.0, 1.0),
              (diff, diff_title, "RdBu_r", -vmax, vmax))
    for ax, (m, name, cmap, lo, hi) in zip(axes, panels):
        colours = matplotlib.colormaps[cmap].with_extremes(bad=NOT_FINITE)
        ax.imshow(m, cmap=colours, vmin=lo, vmax=hi, interpolation="nearest", aspect="auto")
        ax.set_title(name, fontsize=8, color=FAIL if bad and m is not ref else "black")
        ax.set_xlabel("key", fontsize=7)
        ax.tick_params(labelsize=6)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.yaxis.get_major_locator().set_params(integer=True)
    axes[0].set_ylabel("query", fontsize=7)
    if title:
        fig.suptitle(title, fontsize=8, x=0.01, ha="left")
    fig.subplots_adjust(left=0.06, right=0.99, bottom=0.17, top=0.86, wspace=0.25)
    return fig


def heatmap(candidate: Sequence[Sequence[float | None]], reference: Sequence[Sequence[float | None]],
            title: str = "") -> str:
    """Candidate weights, reference weights (both on a 0..1 scale), and their difference (a diverging
    scale symmetric around 0), side by side, as a PNG data URI; non-finite cells black
    (``heatmap_figure``). No colorbars and no tight bounding box: this figure is drawn once per
    heatmap and per submission, so it must be cheap."""
    return _png_uri(heatmap_figure(candidate, reference, title), tight=False)


def _numbers(value: Any) -> list[float] | None:
    if not isinstance(value, (list, tuple)) or not value:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return None
    return [float(v) for v in value]


def find_series(details: Any, *, path: str = "", depth: int = 3) -> list[dict]:
    """Every series in a check's details: ``{"name", "sizes", "series": {label: values}}``.

    A series is a dict with ``sizes`` (two or more numbers) and at least one other list of numbers
    of the same length; anything else is ignored, so a check without probes yields ``[]``.
    """
    found = []
    if not isinstance(details, dict) or depth < 0:
        return found
    sizes = _numbers(details.get(SERIES_KEY))
    if sizes and len(sizes) >= 2:
        series = {k: v for k, v in ((k, _numbers(v)) for k, v in details.items() if k != SERIES_KEY)
                  if v and len(v) == len(sizes)}
        preferred = {k: series[k] for k in PREFERRED if k in series}
        if len(preferred) >= 2:  # a candidate and a reference: ratios and the like would only crowd them
            series = preferred
        if series:
            found.append({"name": str(details.get("quantity") or path or "cost"), "x": str(details.get("sweep") or "size"),
                          "sizes": sizes, "series": series})
    for key, value in details.items():
        if isinstance(value, dict):
            found += find_series(value, path=f"{path}.{key}" if path else key, depth=depth - 1)
    return found


def loglog_figure(found: dict, title: str = ""):
    """The figure of ``loglog``, or None when no line has two positive points (tests read its ticks).

    The x ticks are the measured sizes themselves, labelled as plain numbers, and no minor tick is
    labelled on either axis: within one decade matplotlib labels every minor tick of a log axis,
    and those labels ran into each other.
    """
    fig, ax = plt.subplots(figsize=(4.6, 3.0))
    drawn = 0
    sizes = np.asarray(found["sizes"], dtype=float)
    for label, values in found["series"].items():
        y = np.asarray(values, dtype=float)
        ok = (sizes > 0) & (y > 0) & np.isfinite(y)
        if ok.sum() < 2:
            continue
        slope = np.polyfit(np.log(sizes[ok]), np.log(y[ok]), 1)[0]
        ax.loglog(sizes[ok], y[ok], marker="o", label=f"{label} (slope {slope:.2f})")
        drawn += 1
    if not drawn:
        plt.close(fig)
        return None
    shown = sorted({float(v) for v in sizes if v > 0})
    while len(shown) > 8:  # many sizes: every other one, the last kept
        shown = shown[::-2][::-1]
    ax.xaxis.set_major_locator(FixedLocator(shown))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=6))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(found.get("x", "size"))
    ax.set_ylabel(found["name"])
    ax.set_title(title, loc="left", fontsize=8)
    ax.legend(fontsize=7, frameon=False)
    ax.grid(True, which="both", alpha=0.25)
    return fig


def loglog(found: dict, title: str = "") -> str | None:
    """A log-log plot of one series from ``find_series``, with each line's fitted slope, as an SVG data
    URI; None when no line has two positive points (``loglog_figure``)."""
    fig = loglog_figure(found, title)
    return None if fig is None else _data_uri(fig)


def finite(value: float) -> bool:
    """Whether a number is finite (for the template)."""
    return isinstance(value, (int, float)) and math.isfinite(value)
