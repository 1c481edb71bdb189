"""What every command shares: the consoles, the store, error handling with the documented
exit codes, and the parsers of list-valued options."""

from __future__ import annotations

import errno
import functools
import math
import os
import sys
from collections.abc import Callable

import click
from rich.console import Console

from hpcscope.formatting import markup_safe as S
from hpcscope.results.store import Store

err = Console(stderr=True)
out = Console()

# runner.EXIT_FAILED and runner.EXIT_USAGE. This module does not import runner, build,
# launch or machine: they load every suite, numpy, scipy and matplotlib (about 1.5 s),
# and `hpcscope list` needs none of them (issue 19: list < 1 s).
EXIT_FAILED, EXIT_USAGE = 1, 2


def store_of(ctx: click.Context, *, create: bool = False) -> Store:
    """The store of --db; only commands that measure create it."""
    return Store(ctx.obj["db"], create=create)


def _loaded(module: str, name: str) -> type | None:
    """An exception class of a module, if that module was loaded; one that was never
    imported cannot have raised anything, so it need not be imported to be caught."""
    found = getattr(sys.modules.get(module), name, None)
    return found if isinstance(found, type) else None


def _exit_code(exc: BaseException) -> tuple[int, str] | None:
    """(exit code, message) of a known failure, None for a bug."""

    def isa(module: str, name: str) -> bool:
        cls = _loaded(module, name)
        return cls is not None and isinstance(exc, cls)

    if isa("hpcscope.runner", "UsageError") or isa("hpcscope.launch.base", "BackendError"):
        return EXIT_USAGE, f"[red]error:[/red] {S(exc)}"
    if isa("hpcscope.build", "BuildError"):
        return EXIT_FAILED, f"[red]build failed:[/red] {S(exc)}"
    if isinstance(exc, OSError):  # an output place that cannot be written, a missing file
        return EXIT_USAGE, f"[red]error:[/red] {S(exc)}; choose another place (-o/--out, --db)"
    if isinstance(exc, (LookupError, ValueError)) or isa(
        "hpcscope.machine.topology", "TopologyError"
    ):
        return EXIT_USAGE, f"[red]error:[/red] {S(exc)}"
    return None


def writes_to(what: str, how: str) -> None:
    """Names what the running command writes now ("standard output", "the report's folder
    X") and how to write elsewhere ("choose another -o/--out"), so that a full disk or a
    folder planted where a file belongs is named for that, not for --db or --out."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta["hpcscope_writes"] = (what, how)


def need_stdout(command: str) -> None:
    """Refuses to run a command whose results go to standard output when it is closed
    (`>&-`: Python then has no sys.stdout and click would print nothing, exit 0)."""
    try:
        closed = sys.stdout is None or not os.fstat(1)
    except OSError:
        closed = True
    if closed:
        raise usage_error(
            f"standard output is closed: `hpcscope {command}` writes its results there; "
            "give it one (a terminal, a pipe or > FILE)"
        )


def _os_fault(exc: OSError) -> str | None:
    """The line for an OSError in what the command writes (writes_to): a full disk, a
    folder where a file belongs or a file where a folder belongs; None for others."""
    ctx = click.get_current_context(silent=True)
    what, how = (ctx.meta.get("hpcscope_writes") if ctx else None) or (None, None)
    target = exc.filename2 if exc.filename2 is not None else exc.filename
    named = os.fsdecode(target) if isinstance(target, (str, bytes)) else None
    if exc.errno in (errno.ENOSPC, errno.EDQUOT) and what is not None:
        problem = "no space left" if exc.errno == errno.ENOSPC else "disk quota exceeded"
        return f"{problem} on {what}{f' ({named})' if named else ''}: free space there or {how}"
    if exc.errno == errno.EISDIR and named:
        return (
            f"{named} is a folder where hpcscope writes a file (left there, or planted): "
            f"remove it or {how or 'choose another place'}"
        )
    if exc.errno == errno.EINVAL and named and str(exc.strerror).startswith("not a regular"):
        return (
            f"{named} is {exc.strerror}: hpcscope writes files and replaces only files; "
            f"{how or 'choose another place'}"
        )
    if exc.errno == errno.ENOTDIR and named:
        return (
            f"{named}: a file stands where hpcscope needs a folder: remove it or "
            f"{how or 'choose another place'}"
        )
    return None


# The HPCSCOPE_* variables hpcscope reads, and the form each takes: a value of another
# form is refused in one line (exit 2) before the command runs, rather than ignored.
def _seconds(minimum_open: bool) -> Callable[[str], bool]:
    def check(text: str) -> bool:
        try:
            value = float(text)
        except ValueError:
            return False
        return math.isfinite(value) and (value > 0 if minimum_open else value >= 0)

    return check


ENVIRONMENT: dict[str, tuple[str, Callable[[str], bool]]] = {
    "HPCSCOPE_DB": ("a path of the store file, e.g. ~/hpcscope.db", bool),
    "HPCSCOPE_CACHE": ("a folder for built programs and figures, e.g. ~/.cache/hpcscope", bool),
    "HPCSCOPE_LAB_DIR": ("a folder for the lab's state, e.g. /run/hpcscope-lab", bool),
    "HPCSCOPE_LOCK_TIMEOUT": ("seconds to wait for a locked store, >= 0, e.g. 60", _seconds(False)),
    "HPCSCOPE_HANG_S": ("seconds without a record before a launch is hung, > 0", _seconds(True)),
    "HPCSCOPE_FIGURE_CACHE": ("0 (off) or 1 (on)", lambda text: text in ("0", "1")),
}


def check_environment() -> str | None:
    """The line refusing the first HPCSCOPE_* variable of the wrong form, or None."""
    for name, (form, ok) in ENVIRONMENT.items():
        value = os.environ.get(name)
        if value is not None and not ok(value.strip()):
            shown = value if len(value) <= 60 else value[:57] + "..."
            return f"{name}={shown!r}: expected {form}; fix or unset it"
    return None


def handle_errors(fn):
    """Maps known failures to the documented exit codes with one clear message, and no
    traceback ever reaches the terminal: a fault outside hpcscope (a full disk, a
    read-only folder) is named for what it is (launch/base.fault_text); anything else is
    a bug: one line, and the traceback in a log file whose path that line gives
    (launch/base.fault_log: ~/.cache/hpcscope/errors/), exit 1. Ctrl-C says what it
    interrupted when that is known (a build), else that nothing was being measured.
    click's own exceptions (usage errors, --help) pass through to click."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except KeyboardInterrupt as exc:
            err.print(S(exc) if str(exc) else "interrupted (nothing was being measured)")
            sys.exit(EXIT_FAILED)
        except (click.exceptions.ClickException, click.exceptions.Abort, click.exceptions.Exit):
            raise
        except Exception as exc:
            known = _exit_code(exc)
            named_here = _os_fault(exc) if isinstance(exc, OSError) else None
            if named_here is not None:
                known = (EXIT_USAGE, f"[red]error:[/red] {S(named_here)}")
            elif known is None or isinstance(exc, OSError):
                # loaded only now: it brings rich's progress and the plan types
                from hpcscope.launch.base import fault_log, fault_text

                named = fault_text(exc)
                if named is not None:
                    known = (EXIT_USAGE, f"[red]error:[/red] {S(named)}")
                elif known is None:
                    log = fault_log(exc)
                    where = f"the traceback is in {log}" if log else "no log could be written"
                    known = (
                        EXIT_FAILED,
                        f"[red]unexpected error:[/red] {S(type(exc).__name__)}: "
                        f"{S(str(exc)[:300])}; this is a bug in hpcscope, please report it "
                        f"({S(where)})",
                    )
            # one line, whatever the terminal's width: the terminal wraps it on screen, a
            # log or grep keeps it whole (rich would break it at the width it saw first)
            err.print(known[1], soft_wrap=True)
            sys.exit(known[0])

    return wrapper


def usable_runs(store: Store, run_ids: list[int]) -> list[int]:
    """The runs of a view over several runs that can be read: each stored run is checked
    first (Store.problem), a bad one is skipped with one line that names it, its field
    and how to delete it, and the others are shown. When none is left, the first one's
    problem is the error (exit 2)."""
    skipped: list[str] = []
    good = store.usable(run_ids, skipped.append)
    if not good and skipped:
        raise usage_error(skipped[0].removeprefix("skipped "))
    for line in skipped:
        err.print(f"[yellow]warning:[/yellow] {S(line)}", soft_wrap=True)
    return good


def usage_error(message: str) -> Exception:
    """runner.UsageError(message), imported only when there is an error to raise."""
    from hpcscope.runner import UsageError

    return UsageError(message)


def _number(text: str) -> bool:
    """Plain ASCII digits: str.isdigit() also takes '²' and '٣', which int() refuses or
    reads as another number."""
    return text.isascii() and text.isdigit()


def nonempty(text: str | None, option: str, example: str) -> str | None:
    """An option's text, refused when given but empty: `--sizes ''` is a mistake (a shell
    variable that was not set), never "the default"."""
    if text is not None and not text.strip():
        raise usage_error(
            f"{option} '{text}': empty; leave {option} out for its default or give a "
            f"value, e.g. {option} {example}"
        )
    return text


def csv_list(text: str | None, option: str = "", example: str = "a,b") -> list[str] | None:
    """'a,b' -> ['a', 'b']; None when the option was not given. An empty value, an empty
    item or one named twice is refused: `--placements ''` is not "all", 'core,,core' is a
    typo, and running a placement twice would silently double the work."""
    if text is None:
        return None
    where = f"{option} '{text}'" if option else f"'{text}'"
    if not text.strip():
        raise usage_error(
            f"{where}: empty; leave {option or 'the option'} out for its default or name "
            f"at least one item, e.g. {option} {example}".rstrip()
        )
    items = [t.strip() for t in text.split(",")]
    if any(not t for t in items):
        raise usage_error(f"{where}: an empty item between commas; write e.g. a,b")
    twice = sorted({t for t in items if items.count(t) > 1})
    if twice:
        raise usage_error(f"{where}: {', '.join(twice)} named twice; name each once")
    return items


# OS CPU numbers (--cpus) and MPI counts (--counts) above these are typos: no Linux
# machine numbers a CPU past 2^20 (CONFIG_NR_CPUS is at most 8192 today), and an MPI count
# is a C int.
MAX_CPU = 1 << 20
MAX_COUNT = 2**31 - 1


def cpu_list(text: str | None) -> list[int] | None:
    items = csv_list(text, "--cpus", "0,7")
    if items is None:
        return None
    if not all(_number(t) and len(t) < 10 and int(t) < MAX_CPU for t in items):
        raise usage_error(
            f"--cpus '{text}': give OS CPU numbers (0..{MAX_CPU - 1}) separated by commas, "
            "e.g. --cpus 0,7"
        )
    return [int(t) for t in items]


def count_list(text: str | None) -> list | None:
    """'8,1p,100p' -> [8, '1p', '100p'] (a count, or a multiple of the rank count)."""
    items: list = []
    for t in csv_list(text, "--counts", "1p,10p,100p") or []:
        multiple = t.endswith("p")
        number = t[:-1] if multiple else t
        if not _number(number):
            raise usage_error(
                f"--counts: '{t}' is neither a count (e.g. 1000) nor a "
                "multiple of the rank count (e.g. 10p)"
            )
        if len(number) > 10 or int(number) > MAX_COUNT:
            raise usage_error(
                f"--counts: '{t}' is above {MAX_COUNT} (an MPI count is a C int); give "
                "smaller counts, e.g. 1000 or 10p"
            )
        items.append(t if multiple else int(t))
    return items or None


def peak_overrides(items: tuple[str, ...]) -> dict:
    """--peak NAME=VALUE...: each a known peak, stated once, positive, finite and in a
    sane range (machine/peaks.py stated_peak)."""
    from hpcscope.machine.peaks import stated_peak

    out: dict[str, str] = {}
    for item in items:
        name, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not value or not name:
            raise usage_error(
                f"--peak '{item}': write NAME=VALUE, e.g. --peak disk=2GB/s or --peak fp64=1200"
            )
        if name in out:
            raise usage_error(
                f"--peak {name} given twice ({name}={out[name]}, {name}={value}); state "
                "each peak once"
            )
        try:
            stated_peak(name, value)
        except ValueError as exc:
            raise usage_error(str(exc)) from None
        out[name] = value
    return out


def _remember_output(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value:
        ctx.meta["output_alias"] = value


# `--output` was the spelling of report and tune; every command now says -o/--out. The old
# spelling still works, hidden from --help.
output_alias = click.option(
    "--output",
    hidden=True,
    expose_value=False,
    callback=_remember_output,
    help="Old spelling of --out.",
)
