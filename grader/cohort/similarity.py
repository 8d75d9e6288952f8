"""Similarity of submissions: which pairs of a cohort's files (and which file and known source) share
more code than independent work would. A flag for a person to read, never a verdict.

Every file is first normalised so that what trivially changes does not hide a copy (``normalise``):
parsed (never run), docstrings dropped, then printed back by ``ast.unparse``, which drops comments
and fixes whitespace, line breaks and parentheses; names the author chose (variables, arguments,
helper functions, classes) become ``v0, v1, ...`` in order of first use, per function (the
contract's names, those the stub defines, stay); import
aliases become the module's name (``np.max`` and ``xp.max`` both read ``numpy.max``); attribute
names, keyword names and builtins stay, since they are the API being called, not a choice of name.
The normalised texts are fingerprinted and compared by ``copydetect`` (winnowed k-grams, the method
of MOSS: Schleimer, Wilkerson and Aiken, SIGMOD 2003). The exercise's stub is boilerplate: its
fingerprints never count, so the contract's signatures and imports shared by every solution do not
make two of them alike.

Compared, per exercise: every pair of candidates' files, and each candidate's file against every
known source a candidate can find: ``reference/<id>.py`` (each track), ``submissions/samples/<id>/``,
the bank of named mistakes (each mutant's full source; only the closest mutant per candidate is
kept, since they all repeat the reference) and any folder the interviewer registers
(``extra``, e.g. public implementations they want to rule out).

A pair's ``score`` (0 to 1) is, for two candidates, the larger of the two shares of a file's
fingerprinted code found in the other (a copy padded with extra code still shows in the share of
the file it was copied from); for a candidate and a known source, the share of the candidate's file
found in the source (a short mutant of the reference is mostly found in any solution; that says
nothing about the candidate). A pair at or above ``threshold`` is ``flagged``.
"""

from __future__ import annotations

import ast
import builtins
import html
import io
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from grader.pyparse import parse

#: copydetect's parameters on the normalised text, in characters: k-grams of ``NOISE`` (shorter
#: shared runs are noise); ``GUARANTEE == NOISE`` is a winnowing window of 1, which keeps every
#: k-gram. That is deliberate: copydetect hashes k-grams with Python's ``hash``, salted per process
#: (PYTHONHASHSEED), so a wider window would pick other fingerprints, and other scores, on every
#: run; with every k-gram kept the score does not depend on the hash values. Submissions are small.
NOISE = 40
GUARANTEE = 40
#: pairs at or above this score are flagged for a person to read. Calibrated on the repository's
#: correct samples of ten exercises: no pair of them, nor any of them with its reference or a
#: mutant, reaches 0.67 (causal_mask's short files share the most); a renamed and reformatted copy
#: scores 1.0 (``tests/test_similarity.py``)
THRESHOLD = 0.75

_BUILTINS = frozenset(dir(builtins)) | {"self", "cls"}


class _Normaliser(ast.NodeTransformer):
    """Drop docstrings, canonicalise the names an author chose (see the module docstring)."""

    def __init__(self, keep: Iterable[str] = ()):
        self.aliases: dict[str, str] = {name: name for name in keep}
        self.globals: dict[str, str] = {}
        self.scopes: list[dict[str, str]] = []

    def _name(self, name: str, *, binding: bool = False) -> str:
        if name in self.aliases:
            return self.aliases[name]
        if name in _BUILTINS:
            return name
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.globals:
            return self.globals[name]
        table = self.scopes[-1] if (self.scopes and binding) else self.globals
        prefix = "v" if self.scopes and binding else "g"
        table[name] = f"{prefix}{len(table)}"
        return table[name]

    @staticmethod
    def _strip_docstring(node):
        body = getattr(node, "body", None)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
        return node

    def visit_Module(self, node):
        self._strip_docstring(node)
        for stmt in node.body:  # module-level defs first, so a call before its def reads the same name
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self._name(stmt.name)
        self.generic_visit(node)
        return node

    def visit_Import(self, node):
        for a in node.names:
            self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            a.asname = None
        return node

    def visit_ImportFrom(self, node):
        for a in node.names:
            self.aliases[a.asname or a.name] = f"{node.module or ''}.{a.name}".lstrip(".")
            a.asname = None
        return node

    def _function(self, node):
        self._strip_docstring(node)
        node.name = self._name(node.name)
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.args.defaults = [self.visit(d) for d in node.args.defaults]
        node.args.kw_defaults = [self.visit(d) if d is not None else None for d in node.args.kw_defaults]
        node.returns = None
        self.scopes.append({})
        for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                  *([node.args.vararg] if node.args.vararg else []), *([node.args.kwarg] if node.args.kwarg else [])):
            a.arg = self._name(a.arg, binding=True)
            a.annotation = None
        node.body = [self.visit(s) for s in node.body]
        self.scopes.pop()
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node):
        self._strip_docstring(node)
        node.name = self._name(node.name)
        self.generic_visit(node)
        return node

    def visit_Name(self, node):
        node.id = self._name(node.id, binding=isinstance(node.ctx, ast.Store))
        return node

    def visit_AnnAssign(self, node):
        return ast.Assign(targets=[self.visit(node.target)], value=self.visit(node.value)) if node.value else ast.Pass()


def normalise(source: str, keep: Iterable[str] = ()) -> str:
    """The text a file is compared as (see the module docstring): parsed, docstrings and comments
    dropped, names canonical, printed back by ``ast.unparse``.

    Args:
        keep: names left as they are (the contract's: the functions, classes and methods the stub
            defines), so that a helper defined first does not shift the entry point's name.

    Raises:
        SyntaxError, ValueError: the source does not parse (``compare_sources`` then compares the
            raw text).
    """
    tree = _Normaliser(keep).visit(parse(source))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def contract_names(stubs: Iterable[str]) -> frozenset[str]:
    """The names of every function, class and method the stubs define (unparsable stubs add none)."""
    names = set()
    for stub in stubs:
        try:
            tree = parse(stub)
        except (SyntaxError, ValueError):
            continue
        names |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    return frozenset(names)


@dataclass(frozen=True)
class Source:
    """A file taking part in a comparison.

    Attributes:
        label: how tables name it (``alice``, ``reference/softmax.py``, ``samples/correct_x.py``).
        kind: ``candidate``, or where a known source comes from: ``reference``, ``sample``, ``mistake``,
            ``registered``.
        text: the file as written.
    """

    label: str
    kind: str
    text: str


@dataclass(frozen=True)
class Pair:
    """Two files compared.

    Attributes:
        exercise: the exercise id.
        a / b: labels (``a`` is always a candidate).
        kind: ``candidates`` (two candidates) or the kind of ``b``'s known source.
        score: max(share_a, share_b) for two candidates, share_a for a known source (0 to 1).
        share_a / share_b: the share of each file's fingerprinted code found in the other.
        flagged: ``score >= threshold``.
        html_a / html_b: the normalised texts, HTML-escaped, the matching spans in ``<mark>``.
    """

    exercise: str
    a: str
    b: str
    kind: str
    score: float
    share_a: float
    share_b: float
    flagged: bool
    html_a: str = field(default="", repr=False)
    html_b: str = field(default="", repr=False)

    def to_json(self) -> dict:
        """The figures (no HTML): for JSON and CSV."""
        return {"exercise": self.exercise, "a": self.a, "b": self.b, "kind": self.kind, "score": round(self.score, 4),
                "share_a": round(self.share_a, 4), "share_b": round(self.share_b, 4), "flagged": self.flagged}


class _Print:
    """A file's normalised text and its copydetect fingerprint."""

    def __init__(self, source: Source, boilerplate, keep: frozenset[str] = frozenset()):
        from copydetect import CodeFingerprint  # noqa: PLC0415 - similarity only

        try:
            self.text = normalise(source.text, keep)
        except (SyntaxError, ValueError, RecursionError):
            self.text = source.text  # compared as written; still a flag for a person
        self.source = source
        self.fp = CodeFingerprint(f"{source.label}.txt", NOISE, GUARANTEE - NOISE + 1, boilerplate=boilerplate,
                                  filter=False, fp=io.StringIO(self.text))


def _boilerplate(stubs: Iterable[str], keep: frozenset[str] = frozenset()):
    from copydetect.utils import get_document_fingerprints  # noqa: PLC0415

    hashes = set()
    for stub in stubs:
        try:
            text = normalise(stub, keep)
        except (SyntaxError, ValueError):
            text = stub
        hashes |= set(get_document_fingerprints(text, NOISE, GUARANTEE - NOISE + 1)[0])
    import numpy as np  # noqa: PLC0415

    return np.array(sorted(hashes), dtype=np.int64) if hashes else np.array([], dtype=np.int64)


def _compare(exercise: str, x: _Print, y: _Print, kind: str, threshold: float) -> Pair:
    from copydetect import compare_files  # noqa: PLC0415
    from copydetect.utils import highlight_overlap  # noqa: PLC0415

    if not x.fp.hashes or not y.fp.hashes:
        shares, slices = (0.0, 0.0), None
    else:
        _overlap, shares, slices = compare_files(x.fp, y.fp)
    share_a, share_b = (float(min(1.0, s)) for s in shares)
    score = max(share_a, share_b) if kind == "candidates" else share_a

    def marked(p: _Print, sl) -> str:
        if sl is None or getattr(sl, "size", 0) == 0 or sl.ndim != 2 or sl.shape[1] == 0:
            return html.escape(p.text)
        with _quiet():
            return highlight_overlap(p.text, sl, "<mark>", "</mark>", escape_html=True)[0]

    return Pair(exercise, x.source.label, y.source.label, kind, score, share_a, share_b, score >= threshold,
                marked(x, slices[0] if slices else None), marked(y, slices[1] if slices else None))


class _quiet:
    """copydetect warns on empty highlights; nothing a reader needs."""

    def __enter__(self):
        import warnings  # noqa: PLC0415

        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        self._w.__exit__(*exc)


def compare_sources(exercise: str, candidates: list[Source], known: list[Source], *, stubs: Iterable[str] = (),
                    threshold: float = THRESHOLD) -> list[Pair]:
    """Compare every pair of ``candidates`` and each candidate with each of ``known``.

    Args:
        exercise: the exercise id (recorded in each pair).
        candidates: the candidates' latest files of this exercise.
        known: sources a candidate can find (reference, samples, mistakes, registered folders).
        stubs: the exercise's starting files: boilerplate whose fingerprints never count.
        threshold: score at or above which a pair is flagged.
    Returns:
        The pairs, highest score first.
    """
    logging.getLogger("copydetect").setLevel(logging.ERROR)
    stubs = list(stubs)
    keep = contract_names(stubs)
    boiler = _boilerplate(stubs, keep)
    cands = [_Print(s, boiler, keep) for s in candidates]
    refs = [_Print(s, boiler, keep) for s in known]
    pairs = []
    for i, x in enumerate(cands):
        for y in cands[i + 1:]:
            pairs.append(_compare(exercise, x, y, "candidates", threshold))
        for y in refs:
            pairs.append(_compare(exercise, x, y, y.source.kind, threshold))
    # the mutants of the bank are near-copies of the reference: one pair per candidate, the closest
    best: dict[str, Pair] = {}
    for p in pairs:
        if p.kind == "mistake" and (p.a not in best or p.score > best[p.a].score):
            best[p.a] = p
    pairs = [p for p in pairs if p.kind != "mistake" or best.get(p.a) is p]
    pairs.sort(key=lambda p: (-p.score, _RANK.get(p.kind, 9), p.a, p.b))
    return pairs


#: at equal scores, the source a person should read first: another candidate, then the reference
_RANK = {"candidates": 0, "reference": 1, "sample": 2, "registered": 3, "mistake": 4}


def known_sources(exercise_id: str, extra: Iterable[Path] = ()) -> tuple[list[Source], list[str]]:
    """The sources a candidate can find for an exercise, and its stubs (every track).

    Returns:
        ``(known, stubs)``: the reference of each track, ``submissions/samples/<id>/**/*.py``, each
        mutant of the bank of each track, and every ``*.py`` under each folder of ``extra``.
    """
    from grader.grading.exercise import get_exercise, project_root  # noqa: PLC0415

    base = get_exercise(exercise_id)
    known, stubs = [], []
    for track in base.tracks:
        ex = get_exercise(exercise_id, track=track)
        stubs.append(ex.stub_path.read_text(encoding="utf-8"))
        known.append(Source(f"reference/{ex.reference_path.name}", "reference",
                            ex.reference_path.read_text(encoding="utf-8")))
        for m in ex.mistakes:
            known.append(Source(f"mistake/{track}/{m.name}", "mistake", m.source))
    samples = project_root() / "submissions" / "samples" / exercise_id
    for p in sorted(samples.rglob("*.py")) if samples.is_dir() else ():
        known.append(Source(f"samples/{p.relative_to(samples)}", "sample", p.read_text(encoding="utf-8", errors="replace")))
    for folder in extra:
        folder = Path(folder)
        for p in sorted(folder.rglob("*.py")):
            known.append(Source(f"{folder.name}/{p.relative_to(folder)}", "registered",
                                p.read_text(encoding="utf-8", errors="replace")))
    return known, stubs


def similarity_of_folder(root: Path, *, exercise: str | None = None, extra: Iterable[Path] = (),
                         threshold: float = THRESHOLD) -> list[Pair]:
    """``compare_sources`` for every exercise of a cohort folder in ``grade batch``'s layouts
    (``grader.cohort.batch.discover``): one file per candidate and exercise.

    Args:
        root: the submissions folder.
        exercise: the exercise of a flat folder (as ``grade batch --exercise``).
        extra: folders the interviewer registers as known sources.
    Returns:
        Every exercise's pairs, highest score first.
    Raises:
        NotADirectoryError: ``root`` is not a folder.
    """
    from grader.cohort.batch import discover  # noqa: PLC0415
    from grader.grading.notebook import submission_text  # noqa: PLC0415

    found = discover(root, exercise=exercise)
    by_exercise: dict[str, list[Source]] = {}
    for item in found.items:
        data = item.path.read_bytes()
        text = submission_text(data) if item.path.suffix == ".ipynb" else data.decode("utf-8", errors="replace")
        if text is not None:  # an unreadable notebook has nothing to compare
            by_exercise.setdefault(item.exercise, []).append(Source(item.candidate, "candidate", text))
    pairs: list[Pair] = []
    for ex_id, cands in sorted(by_exercise.items()):
        known, stubs = known_sources(ex_id, extra)
        pairs += compare_sources(ex_id, cands, known, stubs=stubs, threshold=threshold)
    pairs.sort(key=lambda p: (-p.score, p.exercise, _RANK.get(p.kind, 9), p.a, p.b))
    return pairs


#: what every page and table of similarity says first
DISCLAIMER = ("Similarity is a flag for a person to read, never a verdict: short solutions of one contract share "
              "idioms, and a high score only says which files to open side by side.")


def render_html(pairs: list[Pair], *, title: str = "Similarity", shown: int = 20, threshold: float = THRESHOLD) -> str:
    """One self-contained HTML page: the ranked pairs, then a side-by-side of the ``shown`` highest
    (flagged first) with the matching spans highlighted in the normalised texts."""
    import jinja2  # noqa: PLC0415

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(__file__).resolve().parent.parent / "templates")),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    return env.get_template("similarity.html.j2").render(title=title, pairs=pairs, shown=pairs[:shown],
                                                         threshold=threshold, disclaimer=DISCLAIMER)
