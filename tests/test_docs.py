"""The manual as a site: `mkdocs build --strict` passes (no broken link or anchor, no missing page or
included snippet), the CLI reference is generated from the click commands, and the README's links
into docs/ resolve (they are read on GitHub, where MkDocs checks nothing)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

from grader.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_mkdocs_build_strict_has_no_warning(tmp_path):
    site = tmp_path / "site"
    # NO_MKDOCS_2_WARNING: Material's end-of-life banner, not a warning; PYTHONPATH: mkdocs-click
    # documents this checkout's grader.cli, whatever is installed.
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                          str(ROOT / "mkdocs.yml"), "--site-dir", str(site)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    log = run.stdout + run.stderr
    assert run.returncode == 0, log
    assert "WARNING" not in log, log
    # The CLI reference is mkdocs-click's rendering of grader.cli's commands: every one is there.
    reference = (site / "cli" / "index.html").read_text(encoding="utf-8")
    for name in main.commands:
        assert f"grade {name}" in reference, name
    # ... and its placeholders read as text (docs/hooks.py), not as swallowed HTML tags.
    assert "DIRECTORY/&lt;candidate&gt;/&lt;exercise&gt;.py" in reference
    # SECURITY.md and the README's set-up are included, not copied.
    security = (site / "security" / "index.html").read_text(encoding="utf-8")
    assert "Fault attribution" in security and "--8&lt;--" not in security
    # A table's `a\|b` (GitHub's escape) reads a|b on the site too, included files' tables as well.
    assert "<code>unshare(CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET)</code>" in security
    commands = (site / "commands" / "index.html").read_text(encoding="utf-8")
    assert "<code>--track numpy|torch</code>" in commands and "\\|" not in commands
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "Set-up: two commands" in home and "softmax/correct_logsumexp.py" in home


def test_readme_links_resolve_and_reach_every_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = [t for t in re.findall(r"\]\(([^)\s]+)\)", readme) if "://" not in t]
    for target in targets:
        assert (ROOT / target.split("#")[0]).exists(), target
    linked = {Path(t.split("#")[0]).as_posix() for t in targets}
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name != "index.md":  # the site's home: the README's own sections
            assert f"docs/{page.name}" in linked, page.name


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    return hooks


def test_hook_escapes_placeholders_and_keeps_markdown_tags():
    hooks = _hooks()
    html = '<p>DIR/<candidate>/<exercise>.py, <code>spec_<track>.md</code>, <a href="x">x</a></p>'
    assert hooks.escape_placeholders(html) == (
        '<p>DIR/&lt;candidate&gt;/&lt;exercise&gt;.py, <code>spec_&lt;track&gt;.md</code>, <a href="x">x</a></p>')


def test_hook_unescapes_pipes_in_table_code_only():
    hooks = _hooks()
    html = "<td><code>a\\|b</code> c\\|d</td><p><code>e\\|f</code></p>"
    assert hooks.unescape_table_code_pipes(html) == "<td><code>a|b</code> c\\|d</td><p><code>e\\|f</code></p>"
