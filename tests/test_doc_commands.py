"""The documented commands are today's CLI (issue 27): every `hpcscope ...` line in a code
block of README.md or docs/*.md is parsed by the real click commands, so a renamed or
removed verb or option, or a value of the wrong type, fails here with the file and line.

Nothing runs: `make_context` is click's parsing and type checking without the command's
body. Code blocks are fenced (``` or ~~~) or indented by four spaces. A line may hold
several commands (`;`, `&&`, `|`, `$(...)`); output redirections, `# comments`, a `$ `
prompt, `sudo`, `env`, `VAR=value` and shell keywords (`do`, `then`) around them are left
out, and the program may be spelled `hpcscope` or a path ending in it
(`.venv/bin/hpcscope`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from hpcscope.cli.commands import main

REPO = Path(__file__).resolve().parents[1]
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

# Words that stand for a value in prose-like usage lines; replaced by something of the
# right type so that only the CLI's own words are checked. Docs should prefer concrete
# values (`hpcscope show 12`), so this list stays short.
PLACEHOLDERS = {
    "RUN": "1",
    "RUN_A": "1",
    "RUN_B": "2",
    "FILE": "file.json",
    "DIR": "dir",
    "SUITE": "p2p",
    "N": "2",
}

# Shell words that may precede a command on the same line.
PREFIX_WORDS = {"do", "then", "else", "time", "exec", "env", "!"}
SEPARATORS = {";", "&&", "||", "|", "&", "(", ")"}
ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
STARTS_WITH_HPCSCOPE = re.compile(r"^\s*(\$ )?(\S*/)?hpcscope\s")

# (file, line) of code-block lines that look like a command but are not one. Keep tiny.
EXCLUDED = {
    # the pipeline diagram's top box, a label and not a command line
    (
        "docs/architecture.md",
        "hpcscope CLI  (cli/: run, machine, store, analyse, slurm, sim, demo)",
    ),
}


@dataclass(frozen=True)
class DocLine:
    path: Path
    lineno: int
    text: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.lineno}"


def code_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of every line inside a fenced or four-space indented block."""
    fence: str | None = None
    indented = False  # inside an indented block (it goes on over blank lines)
    after_blank = True  # an indented block starts only after a blank line
    for lineno, line in enumerate(text.splitlines(), 1):
        if fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = None
            else:
                yield lineno, line
            continue
        match = FENCE.match(line)
        if match:
            fence, indented, after_blank = match.group(1), False, False
            continue
        if not line.strip():
            after_blank = True
            continue
        if (line.startswith("    ") or line.startswith("\t")) and (indented or after_blank):
            indented = True
            yield lineno, line
        else:
            indented = False
        after_blank = False


def split_substitutions(line: str) -> tuple[str, list[str]]:
    """Replace every `$(...)` by a plausible value (1); return the line and the inner
    command lines, which are commands too."""
    inner: list[str] = []
    out: list[str] = []
    i = 0
    while i < len(line):
        if line.startswith("$(", i):
            depth, j = 1, i + 2
            while j < len(line) and depth:
                depth += {"(": 1, ")": -1}.get(line[j], 0)
                j += 1
            inner.append(line[i + 2 : j - 1])
            out.append("1")
            i = j
        else:
            out.append(line[i])
            i += 1
    return "".join(out), inner


def shell_commands(line: str) -> Iterator[list[str]]:
    """The words of each simple command on one shell line, redirections left out."""
    line = re.sub(r"^\s*\$ ", "", line)  # a shell prompt in a transcript
    line, inner = split_substitutions(line)
    for sub in inner:
        yield from shell_commands(sub)
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True  # `#` outside quotes still starts a comment
    words: list[str] = []
    redirected = False
    for token in lexer:
        if token in SEPARATORS:
            if words:
                yield words
            words, redirected = [], False
        elif set(token) <= set("<>&|"):  # >, >>, <, &>, 2>&1: the rest is a file name
            redirected = True
        elif not redirected:
            words.append(token)
    if words:
        yield words


def hpcscope_argv(words: list[str]) -> list[str] | None:
    """The arguments after `hpcscope` when the simple command runs hpcscope, else None."""
    i = 0
    while i < len(words):
        word = words[i]
        if word in PREFIX_WORDS or ENV_ASSIGNMENT.match(word):
            i += 1
        elif word == "sudo":
            i += 1
            while i < len(words) and words[i].startswith("-"):  # sudo -E, sudo -u user
                i += 2 if words[i] in ("-u", "-g") else 1
        else:
            break
    if i >= len(words) or Path(words[i]).name != "hpcscope":
        return None
    return [PLACEHOLDERS.get(word, word) for word in words[i + 1 :]]


def commands_of(text: str) -> list[list[str]]:
    """Every hpcscope command line (its arguments) on one line of a code block."""
    found = []
    for words in shell_commands(text):
        argv = hpcscope_argv(words)
        if argv is not None:
            found.append(argv)
    return found


def doc_lines() -> list[DocLine]:
    """Every code-block line of the docs that runs hpcscope, but the EXCLUDED ones."""
    lines = []
    for path in DOC_FILES:
        name = str(path.relative_to(REPO))
        for lineno, text in code_lines(path.read_text(encoding="utf-8")):
            if (name, text.strip()) in EXCLUDED:
                continue
            try:
                runs_hpcscope = bool(commands_of(text))
            except ValueError:  # unbalanced quotes: a command only if it starts like one
                runs_hpcscope = bool(STARTS_WITH_HPCSCOPE.match(text))
            if runs_hpcscope:
                lines.append(DocLine(path, lineno, text.strip()))
    return lines


def _slurm_script(ctx: click.Context) -> list[str]:
    # `slurm script SUITE ARGS...` passes ARGS to `run SUITE --on slurm --dry-run`
    # (cli/slurm.py); its own parser accepts anything, so check them where they go.
    return ["run", ctx.params["suite"], "--on", "slurm", "--dry-run", *ctx.args]


FORWARDS: dict[tuple[str, ...], Callable[[click.Context], list[str]]] = {
    ("slurm", "script"): _slurm_script,
}

NO_ARGS_IS_HELP: tuple[type[Exception], ...] = tuple(
    e for e in (getattr(click.exceptions, "NoArgsIsHelpError", None),) if e is not None
)


def check_argv(argv: list[str]) -> tuple[str, ...]:
    """Parse `hpcscope ARGV` with the real command group, walking subgroups, and return
    the command path (e.g. ("run", "p2p")). Raises click.UsageError (NoSuchOption,
    BadParameter, MissingParameter, no such command, ...) when the CLI would refuse it."""
    command: click.Command = main
    name, args, parent = "hpcscope", list(argv), None
    path: tuple[str, ...] = ()
    try:
        while True:
            ctx = command.make_context(name, args, parent=parent)
            if path in FORWARDS:
                return check_argv(FORWARDS[path](ctx))
            if not isinstance(command, click.Group):
                return path
            protected = getattr(ctx, "_protected_args", None)
            rest = [*(ctx.protected_args if protected is None else protected), *ctx.args]
            if not rest:  # a group alone prints its help
                return path
            sub_name, sub, sub_args = command.resolve_command(ctx, rest)
            assert sub_name is not None and sub is not None
            name, command, args, parent = sub_name, sub, sub_args, ctx
            path = (*path, sub_name)
    except click.exceptions.Exit:  # --help, --version
        return path
    except NO_ARGS_IS_HELP:
        return path


DOC_LINES = doc_lines()


@pytest.mark.parametrize("doc", DOC_LINES, ids=[d.where for d in DOC_LINES])
def test_documented_command_parses(doc: DocLine) -> None:
    for argv in commands_of(doc.text):
        try:
            check_argv(argv)
        except click.ClickException as exc:
            pytest.fail(
                f"{doc.where}: `hpcscope {shlex.join(argv)}` is not valid for today's CLI: "
                f"{exc.format_message()}\n  line: {doc.text}",
                pytrace=False,
            )


def test_readme_commands_are_found() -> None:
    """An extraction bug must not let the test above pass on nothing."""
    readme = [d for d in DOC_LINES if d.path.name == "README.md"]
    assert len(readme) >= 60, [d.text for d in readme]
    verbs = {check_argv(argv)[:2] for d in readme for argv in commands_of(d.text)}
    for verb in [
        ("topo",),
        ("build",),
        ("run", "p2p"),
        ("run", "coll"),
        ("run", "lanes"),
        ("run", "node"),
        ("list",),
        ("show",),
        ("export",),
        ("import",),
        ("history",),
        ("report",),
        ("compare",),
        ("tune",),
        ("slurm", "status"),
        ("sim", "platforms"),
        ("sim", "calibrate"),
        ("lab", "up"),
        ("demo",),
    ]:
        assert verb in verbs, verb


@pytest.mark.parametrize(
    "line",
    [
        "hpcscope run p2p --no-such-option",
        "hpcscope runn p2p",
        "hpcscope run p2pp --quick",
        "hpcscope run p2p --repeat many",
        "hpcscope run p2p --on cloud",
        "hpcscope export last --format xml",
        "hpcscope sim platform hydra",  # -o is required
        "hpcscope slurm script p2p --no-such-option",
        "sudo HPCSCOPE_DB=x.db .venv/bin/hpcscope list --since 7d --bogus",
        "for i in $(seq 3); do hpcscope run p2p --quick --lable x; done",
        "hpcscope report $(hpcscope list --formatt json) -o rep",
    ],
)
def test_a_broken_line_is_detected(line: str) -> None:
    commands = commands_of(line)
    assert commands
    with pytest.raises(click.UsageError):
        for argv in commands:
            check_argv(argv)


def test_extraction() -> None:
    text = "\n".join(
        [
            "Prose with `hpcscope show 1` inline is not a code block.",
            "",
            "    hpcscope list --suite p2p          # a comment --not-an-option",
            "    $ hpcscope show last",
            "",
            "    hpcscope export last --format json > out.json && hpcscope import out.json",
            "not code",
            "    hpcscope continues a paragraph, no blank line before it",
            "```sh",
            "X=1 sudo -E .venv/bin/hpcscope report $(hpcscope list --format json | jq .) -o r",
            "mpirun -np 2 ./app | hpcscope-bind",
            "```",
        ]
    )
    found = [argv for _, line in code_lines(text) for argv in commands_of(line)]
    assert found == [
        ["list", "--suite", "p2p"],
        ["show", "last"],
        ["export", "last", "--format", "json"],
        ["import", "out.json"],
        ["list", "--format", "json"],
        ["report", "1", "-o", "r"],
    ]
    assert check_argv(["--db", "x.db", "run", "p2p", "--quick"]) == ("run", "p2p")
    assert check_argv(["slurm", "script", "coll", "--nodes", "4"]) == ("run", "coll")
    assert check_argv(["run", "p2p", "--help"]) == ("run", "p2p")
