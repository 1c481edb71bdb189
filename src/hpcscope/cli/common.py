"""What every command shares: the consoles, the store, error handling with the documented
exit codes, and the parsers of list-valued options."""

from __future__ import annotations

import functools
import sys

import click
from rich.console import Console

from hpcscope import build as build_mod
from hpcscope import runner
from hpcscope.formatting import markup_safe as S
from hpcscope.launch.base import BackendError
from hpcscope.machine.topology import TopologyError
from hpcscope.results.store import Store

err = Console(stderr=True)
out = Console()


def store_of(ctx: click.Context, *, create: bool = False) -> Store:
    """The store of --db; only commands that measure create it."""
    return Store(ctx.obj["db"], create=create)


def handle_errors(fn):
    """Maps known failures to the documented exit codes with one clear message."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except runner.UsageError as exc:
            err.print(f"[red]error:[/red] {S(exc)}")
            sys.exit(runner.EXIT_USAGE)
        except build_mod.BuildError as exc:
            err.print(f"[red]build failed:[/red] {S(exc)}")
            sys.exit(runner.EXIT_FAILED)
        except BackendError as exc:
            err.print(f"[red]error:[/red] {S(exc)}")
            sys.exit(runner.EXIT_USAGE)
        except OSError as exc:  # an output place that cannot be written, a missing file
            err.print(f"[red]error:[/red] {S(exc)}; choose another place (-o/--out, --db)")
            sys.exit(runner.EXIT_USAGE)
        except (LookupError, ValueError, TopologyError) as exc:
            err.print(f"[red]error:[/red] {S(exc)}")
            sys.exit(runner.EXIT_USAGE)
        except KeyboardInterrupt:
            err.print("interrupted (nothing was being measured)")
            sys.exit(runner.EXIT_FAILED)

    return wrapper


def csv_list(text: str | None, option: str = "") -> list[str] | None:
    """'a,b' -> ['a', 'b']. An empty item or one named twice is refused: 'core,,core' is a
    typo, and running a placement twice would silently double the work."""
    if not text:
        return None
    items = [t.strip() for t in text.split(",")]
    where = f"{option} '{text}'" if option else f"'{text}'"
    if any(not t for t in items):
        raise runner.UsageError(f"{where}: an empty item between commas; write e.g. a,b")
    twice = sorted({t for t in items if items.count(t) > 1})
    if twice:
        raise runner.UsageError(f"{where}: {', '.join(twice)} named twice; name each once")
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
        raise runner.UsageError(
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
            raise runner.UsageError(
                f"--counts: '{t}' is neither a count (e.g. 1000) nor a "
                "multiple of the rank count (e.g. 10p)"
            )
    return items


def peak_overrides(items: tuple[str, ...]) -> dict:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not value:
            raise runner.UsageError(
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
