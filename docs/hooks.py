"""MkDocs hooks: where GitHub's Markdown and Python-Markdown disagree, the site reads as GitHub does.

- The CLI reference's placeholders (``DIR/<candidate>/<exercise>.py``): ``mkdocs-click`` writes each
  command's help text into the page as Markdown, and Markdown passes ``<candidate>`` through as an
  HTML tag, which the browser then hides. On that page, every tag that Markdown itself does not
  produce is escaped back into text.
- A ``|`` inside a code span in a table row is written ``\\|`` (GitHub would split the cell at it);
  Python-Markdown never splits a cell inside a code span and shows the backslash, so the site's
  table cells lose it there.
"""

from __future__ import annotations

import re

#: Tags the Markdown of this site produces (Python-Markdown, its extensions, mkdocs-click's tables).
MARKDOWN_TAGS = frozenset(
    "a abbr blockquote br code dd del details div dl dt em h1 h2 h3 h4 h5 h6 hr img input ins kbd "
    "label li mark ol p pre span strong sub summary sup table tbody td th thead tr ul".split()
)
TAG = re.compile(r"<(/?)([A-Za-z][\w-]*)([^<>]*)>")
TABLE_CELL = re.compile(r"<t[dh]\b[^>]*>.*?</t[dh]>", re.S)
CELL_CODE = re.compile(r"<code>.*?</code>", re.S)


def escape_placeholders(html: str) -> str:
    """``html`` with every ``<name ...>`` whose name is not in MARKDOWN_TAGS written as text."""

    def keep_or_escape(match: re.Match) -> str:
        if match.group(2).lower() in MARKDOWN_TAGS:
            return match.group(0)
        return "&lt;" + match.group(0)[1:-1] + "&gt;"

    return TAG.sub(keep_or_escape, html)


def unescape_table_code_pipes(html: str) -> str:
    """``html`` with ``\\|`` written ``|`` inside the inline code of table cells. (After the Markdown
    is converted, so that files included by snippets, SECURITY.md's tables, are covered too.)"""

    def cell(match: re.Match) -> str:
        return CELL_CODE.sub(lambda m: m.group(0).replace("\\|", "|"), match.group(0))

    return TABLE_CELL.sub(cell, html)


def on_page_content(html, page, config, files):  # noqa: ARG001 - MkDocs' hook signature
    html = unescape_table_code_pipes(html)
    if page.file.src_uri == "cli.md":
        return escape_placeholders(html)
    return html
