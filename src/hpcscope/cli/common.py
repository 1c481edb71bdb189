"""What every command shares: the consoles, the store, error handling with the documented
exit codes, and the parsers of list-valued options."""

from __future__ import annotations

import functools
import sys

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


def handle_errors(fn):
    """Maps known failures to the documented exit codes with one clear message."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except KeyboardInterrupt:
            err.print("interrupted (nothing was being measured)")
            sys.exit(EXIT_FAILED)
        except Exception as exc:
            known = _exit_code(exc)
            if known is None:
                raise
            err.print(known[1])
            sys.exit(known[0])

    return wrapper


def usage_error(message: str) -> Exception:
    """runner.UsageError(message), imported only when there is an error to raise."""
    from hpcscope.runner import UsageError

    return UsageError(message)


def csv_list(text: str | None, option: str = "") -> list[str] | None:
    """'a,b' -> ['a', 'b']. An empty item or one named twice is refused: 'core,,core' is a
    typo, and running a placement twice would silently double the work."""
    if not text:
        return None
    items = [t.strip() for t in text.split(",")]
    where = f"{option} '{text}'" if option else f"'{text}'"
    if any(not t for t in items):
        raise usage_error(f"{where}: an empty item between commas; write e.g. a,b")
    twice = sorted({t for t in items if items.count(t) > 1})
    if twice:
        raise usage_error(f"{where}: {', '.join(twice)} named twice; name each once")
    return items


def cpu_list(text: str | None) -> list[int] | None:
    if not text:
        return None
    try:
        cpus = [int(t) for t in text.split(",")]
        if any(c < 0 for c in cpus):
            raise ValueError
        return cpus
    except ValueError:
        raise usage_error(
            f"--cpus '{text}': give OS CPU numbers separated by commas, e.g. --cpus 0,7"
        ) from None


def count_list(text: str | None) -> list | None:
    """'8,1p,100p' -> [8, '1p', '100p'] (a count, or a multiple of the rank count)."""
    if not text:
        return None
    items: list = []
    for t in csv_list(text, "--counts") or []:
        if t.isdigit():
            items.append(int(t))
        elif t.endswith("p") and t[:-1].isdigit():
            items.append(t)
        else:
            raise usage_error(
                f"--counts: '{t}' is neither a count (e.g. 1000) nor a "
                "multiple of the rank count (e.g. 10p)"
            )
    return items


def peak_overrides(items: tuple[str, ...]) -> dict:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not value:
            raise usage_error(
                f"--peak '{item}': write NAME=VALUE, e.g. --peak disk=2GB/s or --peak fp64=1200"
            )
        out[name.strip()] = value.strip()
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
