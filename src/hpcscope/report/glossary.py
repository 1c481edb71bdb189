"""The words the report uses, defined once: the report's "Reading the report" part and
the README's list under "Reading the report" carry these definitions
(tests/test_no_python_values.py checks the README against them), and the report links
each word where it first appears to its entry (`link_first`).

Costs and restrictions: `link_first` works on the rendered page's text between tags (a
regex over the HTML, no parser): it skips the page's head, headings, links, code,
scripts, styles and SVG, and stops at the glossary itself; a word only inside those is
not linked, which loses nothing, since the glossary is in the table of contents."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    key: str  # the anchor: #term-<key>
    word: str  # as the glossary and the README write it
    text: str  # the definition (plain text; the README may add Markdown links)
    pattern: str  # where the report uses it (a regex over text, word-bounded)


TERMS = (
    Term(
        "placement",
        "placement",
        "where the two MPI ranks run: two hardware threads of one core (smt), two cores "
        "(core), two NUMA nodes (numa), two sockets (socket), two nodes (node), or wherever "
        "the launcher put them (default); each rank reports where it ran.",
        r"\bplacements?\b",
    ),
    Term(
        "cell",
        "cell",
        "one number being measured, e.g. one message size of one test, MPI library and "
        "placement; its precision is the half-width of its 95 % interval over launches.",
        r"\bcells?\b",
    ),
    Term(
        "precision",
        "precision target",
        "how precise a cell was asked to be (--precision; for p2p's fixed counts 5 %); a "
        "number less precise than asked is starred with why.",
        r"\bprecision (?:target|asked)\b",
    ),
    Term(
        "stable",
        "stable / unstable",
        "a number is stable when its 95 % interval over launches is no wider than the "
        "precision asked; otherwise it is unstable: starred (*) in show, with why "
        '(docs/osu.md, "Which numbers are starred").',
        r"\b(?:un)?stable\b",
    ),
    Term(
        "guideline",
        "guideline checks",
        "a collective against its decompositions (Mann-Whitney p, Holm-corrected over "
        "the run's checks); a decomposition significantly faster than the native "
        "collective in two or more launches is a violation, from one launch it is "
        'suggested (docs/collectives.md, "Verdicts").',
        r"\bguideline (?:checks?|findings?)\b",
    ),
    Term(
        "native",
        "native / hier / lane",
        "the MPI library's own collective; lanecoll's hierarchical decomposition (a node "
        "step, one process per node across the nodes, a node step); its full-lane one "
        "(every process of a node carries 1/n of the data across the nodes at once) "
        "(docs/lanecoll.md).",
        r"\b(?:native|hier|lane)\b",
    ),
    Term(
        "k",
        "k",
        "how many processes per node share the work in the lane benchmarks; with L "
        "physical lanes the rate grows up to about L times.",
        r"\bk(?= = \d)",
    ),
    Term(
        "cpu-pair",
        "CPU pair moved",
        "one cache line between the two ranks' CPUs, timed at each launch's start, took "
        "clearly different times in different launches: the host moved the ranks' CPUs (a "
        "hypervisor does), and small-message numbers move with it.",
        r"\bCPU pair moved\b|\bCPUs moved\b",
    ),
    Term(
        "emulated",
        "emulated nodes",
        "ranks grouped into nodes by hpcscope on one machine (LANECOLL_NODE_SIZE), not by "
        "the hardware: all traffic goes through this machine's memory, so lane effects are "
        "not those of a network.",
        r"\bemulated\b",
    ),
    Term(
        "simulated",
        "simulated (deterministic model)",
        "times from a SimGrid model of the machine, not from hardware; its repetitions "
        "repeat exactly, so no significance test applies.",
        r"\bsimulated\b|\bdeterministic model\b",
    ),
)

# elements whose text is not linked: the page head, headings, links, code and pictures
_SKIP = ("head", "title", "h1", "h2", "h3", "a", "code", "pre", "script", "style", "svg")
_TAG = re.compile(r"(<[^>]*>)")
_NAME = re.compile(r"</?([a-zA-Z0-9]+)")
_GLOSSARY_START = '<section id="glossary"'


def link(term: Term, shown: str) -> str:
    """The word as a link to its entry, the definition as its tooltip."""
    return (
        f'<a class="term" href="#term-{term.key}" '
        f'title="{html.escape(term.text, quote=True)}">{shown}</a>'
    )


def link_first(page: str) -> str:
    """`page` (rendered, escaped HTML) with each term's first use in text linked to its
    glossary entry; everything from the glossary section on is left as it is."""
    end = page.find(_GLOSSARY_START)
    head, tail = (page, "") if end < 0 else (page[:end], page[end:])
    todo = list(TERMS)
    depth: dict[str, int] = {}
    out: list[str] = []
    for chunk in _TAG.split(head):
        if chunk.startswith("<"):
            m = _NAME.match(chunk)
            if m and m.group(1).lower() in _SKIP and not chunk.endswith("/>"):
                name = m.group(1).lower()
                depth[name] = depth.get(name, 0) + (-1 if chunk.startswith("</") else 1)
            out.append(chunk)
            continue
        if todo and chunk.strip() and not any(v > 0 for v in depth.values()):
            chunk = _link_in(chunk, todo)
        out.append(chunk)
    return "".join(out) + tail


def _link_in(text: str, todo: list[Term]) -> str:
    """Link the first use of each term still to do in one text node (at most one link per
    term; links never overlap)."""
    spans: list[tuple[int, int, Term]] = []
    for term in list(todo):
        for m in re.finditer(term.pattern, text):
            if all(m.end() <= a or m.start() >= b for a, b, _ in spans):
                spans.append((m.start(), m.end(), term))
                todo.remove(term)
                break
    for start, end, term in sorted(spans, key=lambda s: -s[0]):
        text = text[:start] + link(term, text[start:end]) + text[end:]
    return text
