"""grade report: the HTML file (sections, plots, self-contained), the scorecard's artifacts, and the page
rendered in headless Chromium (screenshot, DOM, console)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.grading.artifacts import MAX_HEATMAPS, MAX_SIDE
from grader.cli import main
from grader.grading.exercise import get_exercise, project_root
from grader.grading.grade import grade_submission
from grader.cohort.plots import find_series
from grader.cohort.report import render_report, write_report
from grader.grading.scorecard import Scorecard, validate, write_scorecard
from mutant_helpers import mutant_file

SAMPLES = project_root() / "submissions" / "samples"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
REQUIRE_CHROMIUM = os.environ.get("GRADER_REQUIRE_CHROMIUM") == "1"
PROBE_DETAILS = {"quantity": "flops", "sweep": "L", "sizes": [64, 128, 256, 512],
                 "candidate": [4e6, 1.6e7, 6.4e7, 2.6e8], "reference": [2e6, 8e6, 3.2e7, 1.3e8],
                 "ratios": [2, 2, 2, 2]}


@pytest.fixture(scope="module")
def cards(tmp_path_factory) -> dict[str, Scorecard]:
    unscaled = mutant_file("attention_scores", "unscaled", tmp_path_factory.mktemp("mutant"))
    graded = {}
    for label, ex, path in (("ann", "attention_scores", unscaled),
                            ("ben", "attention_scores", SAMPLES / "attention_scores" / "correct_einsum.py"),
                            ("cat", "softmax", SAMPLES / "softmax" / "bug_inplace.py")):
        graded[label] = grade_submission(get_exercise(ex), path, sandbox="process", seed=4)
    card = graded["cat"]  # a synthetic complexity probe: the plot hook reads generic details keys
    checks = list(card.checks)
    checks[-1] = replace(checks[-1], details={**checks[-1].details, **PROBE_DETAILS})
    graded["cat"] = replace(card, checks=tuple(checks))
    return graded


def test_artifacts_are_small_public_only_and_interviewer_only(cards):
    card = cards["ann"]
    maps = card.artifacts["heatmaps"]
    assert 0 < len(maps) <= MAX_HEATMAPS
    public = {c.id for c in card.checks if c.visibility == "public"}
    assert {m["check"] for m in maps} <= public
    for m in maps:
        assert len(m["candidate"]) <= MAX_SIDE and all(len(row) <= MAX_SIDE for row in m["candidate"])
        assert len(m["candidate"]) == len(m["reference"])
        for row in m["reference"]:
            assert sum(row) == pytest.approx(1.0, abs=1e-4) or m["shape"][-1] > MAX_SIDE
    assert maps[0]["check"] in {c.id for c in card.checks if c.verdict != "passed"}  # failures first
    validate(card.to_json())
    assert card.candidate_view().artifacts is None
    assert "artifacts" not in card.candidate_view().to_json()


def test_find_series_reads_generic_keys_and_skips_when_absent():
    assert find_series({"max_abs_diff": 0.1, "tolerance": {"rtol": 1e-5}}) == []
    found = find_series({"probe": {"sizes": [1, 2, 4], "candidate": [1, 4, 16], "reference": [1, 2, 4]}})
    assert found[0]["series"].keys() == {"candidate", "reference"}
    assert find_series({"sizes": [1, 2, 4], "seconds": [0.1, 0.2, 0.4]})[0]["series"] == {"seconds": [0.1, 0.2, 0.4]}


def test_report_sections_and_self_contained(cards):
    html = render_report(list(cards.items()))
    for section in ('id="cohort-summary"', 'id="score-distribution"', 'id="pass-rates"', 'id="submission-index"'):
        assert section in html
    assert html.count('class="submission"') == 3
    assert html.count('class="heatmap"') == sum(len((c.artifacts or {}).get("heatmaps", [])) for c in cards.values())
    assert 'alt="log-log plot of' in html
    assert "<script" not in html
    assert not re.search(r'(src|href)="(?!data:|#)', html), "the report must not load anything"
    for check in cards["ann"].checks:
        assert f"<b>{check.id}</b>" in html
    assert "Likely mistake: scores were not scaled" in html  # the messages are there


def test_cli_report(cards, tmp_path):
    paths = []
    for label, card in cards.items():
        paths.append(tmp_path / f"{label}.json")
        write_scorecard(card, paths[-1])
    runner = CliRunner()
    assert runner.invoke(main, ["report", "--help"]).exit_code == 0
    result = runner.invoke(main, ["report", *map(str, paths), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")


def _chromium(url: str, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
         "--enable-logging=stderr", "--v=0", *extra, url],
        capture_output=True, text=True, timeout=120)


def _console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


@pytest.mark.skipif(CHROMIUM is None and not REQUIRE_CHROMIUM, reason="chromium is not installed")
def test_report_renders_in_headless_chromium(cards, tmp_path):
    assert CHROMIUM, "GRADER_REQUIRE_CHROMIUM=1 but chromium is not installed"
    report = write_report(list(cards.items()), tmp_path / "report.html")
    url = report.resolve().as_uri()
    shot = tmp_path / "report.png"
    run = _chromium(url, tmp_path / "profile1", f"--screenshot={shot}", "--window-size=1280,2400",
                    "--hide-scrollbars")
    assert shot.is_file() and shot.stat().st_size > 20_000, run.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert _console_lines(run.stderr) == []
    dom = _chromium(url, tmp_path / "profile2", "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert _console_lines(dom.stderr) == []
    for text in ("Cohort summary", "Pass rate per check", "Attention weights (public cases)", "ann", "ben", "cat"):
        assert text in dom.stdout
    assert dom.stdout.count('class="submission"') == 3
    if os.environ.get("GRADER_REPORT_SCREENSHOT"):
        shutil.copyfile(shot, os.environ["GRADER_REPORT_SCREENSHOT"])


@pytest.mark.skipif(CHROMIUM is None and not REQUIRE_CHROMIUM, reason="chromium is not installed")
def test_console_error_detection_works(tmp_path):
    """The console check above is only worth something if it sees an error when there is one."""
    assert CHROMIUM
    page = tmp_path / "bad.html"
    page.write_text('<html><body><script>console.error("report-broke")</script></body></html>')
    run = _chromium(page.as_uri(), tmp_path / "profile", "--dump-dom")
    assert any("report-broke" in line for line in _console_lines(run.stderr))


def test_check_numbers_are_rows_of_a_small_table_not_raw_json():
    from grader.cohort.report import detail_rows

    rows = detail_rows({"case": "shown apart", "cases": 3,
                        "output": {"tolerance": {"rtol": 1.3e-06, "atol": 1e-05}, "max_abs_diff": 6.957794418394059e-08},
                        "sizes": [16, 32, 64]})
    assert rows == [("cases", "3"), ("output.tolerance.rtol", "1.3e-06"), ("output.tolerance.atol", "1e-05"),
                    ("output.max_abs_diff", "6.958e-08"), ("sizes", "16, 32, 64")]


def test_each_submission_leads_with_its_mistakes_and_hides_passed_numbers(cards):
    html = render_report(list(cards.items()))
    ann = html[html.index(">ann <"):]
    ann = ann[:ann.index('class="submission"')] if 'class="submission"' in ann else ann
    (mistake,) = [m for m in cards["ann"].mistakes if m["name"] == "unscaled"] or cards["ann"].mistakes[:1]
    first = mistake["message"].splitlines()[0]
    assert ann.index(first) < ann.index('<table class="checks">')      # the headline before the table
    # said once as the headline, else only inside each check's detail toggle
    assert ann.count(first) > 1 + 1                                  # (each check's detail has it)
    outside = re.sub(r"<details.*?</details>", "", ann, flags=re.S)
    assert outside.count(first) == 1
    assert outside.count(first) == 1
    # numbers (passed checks' too) only when asked: every numbers table sits inside a detail toggle
    assert 'class="nums"' in html and 'class="nums"' not in re.sub(r"<details.*?</details>", "", html, flags=re.S)


def test_candidate_totals_across_exercises(cards):
    from grader.cohort.report import candidate_totals

    pairs = [("ann", cards["ann"]), ("ann", cards["cat"]), ("ben", cards["ben"])]
    totals = {t["label"]: t for t in candidate_totals(pairs)}
    assert totals["ann"]["score"] == cards["ann"].score + cards["cat"].score
    assert totals["ann"]["max_score"] == cards["ann"].max_score + cards["cat"].max_score
    assert [e["id"] for e in totals["ann"]["exercises"]] == ["attention_scores", "softmax"]
    html = render_report(pairs)
    assert 'id="candidate-totals"' in html
    assert f'{totals["ann"]["score"]:g} / {totals["ann"]["max_score"]:g}' in html


def test_a_nan_result_is_drawn_black_and_counted_never_a_white_max_0():
    """The issue's case: a result with NaN rows (fully masked rows) read as a pass: NaN cells are drawn
    transparent by matplotlib, and nanmax over the rest said "difference (max 0)"."""
    import matplotlib.colors as mcolors
    import matplotlib.pyplot as plt

    from grader.cohort.plots import NOT_FINITE, heatmap, heatmap_figure

    ref = [[0.5, 0.5], [0.25, 0.75], [1.0, 0.0]]
    cand = [[0.5, 0.5], [None, None], [float("nan"), 0.0]]  # null: a NaN as the scorecard stores it
    fig = heatmap_figure(cand, ref)
    try:
        cand_ax, _, diff_ax = fig.axes
        assert diff_ax.get_title() == "difference: 3 of 6 not finite, max 0 elsewhere"
        assert "not finite" in cand_ax.get_title()
        black = mcolors.to_rgba(NOT_FINITE)
        for ax in (cand_ax, diff_ax):
            image = ax.get_images()[0]
            rgba = image.to_rgba(image.get_array())
            assert tuple(rgba[1, 0]) == black and tuple(rgba[2, 0]) == black
            assert tuple(rgba[0, 0]) != black
    finally:
        plt.close(fig)
    fig = heatmap_figure(ref, ref)
    try:
        assert fig.axes[2].get_title() == "difference (max 0)"  # a real pass still reads as one
    finally:
        plt.close(fig)
    assert heatmap(cand, ref).startswith("data:image/png;base64,")


@pytest.mark.parametrize("sizes", [[8, 16, 32, 64], [64, 128, 256, 512, 1024], [16, 24, 32, 48, 64, 96, 128, 192, 256]])
def test_loglog_tick_labels_never_overlap(sizes):
    """Within a decade matplotlib labels every minor tick of a log axis ("2x10^1 3x10^1 ..."): the
    labels ran into each other. Every drawn label's box is apart from its neighbours'."""
    import matplotlib.pyplot as plt

    from grader.cohort.plots import loglog_figure

    found = {"name": "flops", "x": "seq_len", "sizes": sizes,
             "series": {"candidate": [3.0 * s ** 2 for s in sizes], "reference": [2.0 * s ** 1.5 for s in sizes]}}
    fig = loglog_figure(found, "flops vs seq_len")
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for axis in (fig.axes[0].xaxis, fig.axes[0].yaxis):
            labels = [t for t in axis.get_ticklabels(which="both") if t.get_visible() and t.get_text()]
            assert len(labels) >= 2
            boxes = sorted((t.get_window_extent(renderer) for t in labels),
                           key=lambda b: b.x0 if axis is fig.axes[0].xaxis else b.y0)
            for a, b in zip(boxes, boxes[1:]):
                assert not a.overlaps(b), (axis.axis_name, [t.get_text() for t in labels])
        assert [t.get_text() for t in fig.axes[0].xaxis.get_ticklabels()][-1] == f"{sizes[-1]:g}"
    finally:
        plt.close(fig)


def test_an_exercise_has_one_colour_on_every_page():
    """The cohort page and the report both draw score_distribution, from dicts in different orders
    (the page's table order, the report's sorted ids): each exercise's bars keep their colour."""
    import matplotlib.colors as mcolors
    import matplotlib.pyplot as plt

    from grader.cohort.plots import exercise_colour, score_distribution_figure

    def colours(percentages):
        fig = score_distribution_figure(percentages)
        try:
            legend = fig.axes[0].get_legend()
            if legend is None:  # one exercise: no legend, one container
                (bars,) = fig.axes[0].containers
                return {next(iter(percentages)): mcolors.to_hex(bars.patches[0].get_facecolor())}
            return {t.get_text(): mcolors.to_hex(h.get_facecolor())
                    for t, h in zip(legend.get_texts(), legend.legend_handles)}
        finally:
            plt.close(fig)

    a = colours({"softmax": [100, 50], "mha": [20], "rope": [80]})
    b = colours({"rope": [10], "mha": [90, 95], "softmax": [0]})
    assert a == b == {k: exercise_colour(k) for k in ("mha", "rope", "softmax")}
    assert len(set(a.values())) == 3
    assert colours({"mha": [50]}) == {"mha": exercise_colour("mha")}
