"""The report's "Reading the report" part and the README's list carry one set of
definitions (report/glossary.py), and the page links each word's first use to it."""

from __future__ import annotations

import re
from pathlib import Path

from hpcscope.report import glossary

README = Path(__file__).parent.parent / "README.md"


def _readme_terms() -> dict[str, str]:
    """{word: definition} of the README's list under 'Reading the report', Markdown
    code marks and links read as their text."""
    text = README.read_text(encoding="utf-8")
    part = text[text.index("## Reading the report") :]
    part = part[: part.index("\n## ", 3)]
    found = {}
    for word, body in re.findall(r"^- \*\*(.+?)\*\*: (.*?)(?=^- |\Z)", part, re.M | re.S):
        body = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", body).replace("`", "")
        found[word] = " ".join(body.split())
    return found


def test_the_readme_says_what_the_report_says():
    readme = _readme_terms()
    for term in glossary.TERMS:
        assert readme.get(term.word) == " ".join(term.text.split()), term.word


def test_each_word_links_where_it_first_appears_and_nowhere_else():
    page = (
        "<html><head><title>placement</title></head><body><h2>placement</h2>"
        "<p>the stable numbers per placement; each placement again</p>"
        '<p><a href="#x">emulated</a> nodes emulated here</p>'
        "<svg><text>lane</text></svg><p>native and lane, k = 2</p>"
        '<section id="glossary"><dt>placement</dt></section></body></html>'
    )
    out = glossary.link_first(page)
    linked = re.findall(r'<a class="term" href="#term-([^"]+)"[^>]*>([^<]*)</a>', out)
    assert linked == [
        ("stable", "stable"),
        ("placement", "placement"),
        ("emulated", "emulated"),
        ("native", "native"),
        ("k", "k"),
    ]
    assert "<title>placement</title>" in out and "<h2>placement</h2>" in out
    assert "each placement again" in out  # the first use only
    assert out.endswith('<section id="glossary"><dt>placement</dt></section></body></html>')
    # the definition is the tooltip, escaped
    assert 'title="ranks grouped into nodes by hpcscope on one machine' in out
