"""hpcscope command line: thin, parses arguments and calls the modules that do the work.

One module per command group: run (the suites), machine (topo, build), store (list, show,
export), analyse (report, compare, tune), slurm, demo; common and options hold what they
share. Conventions (docs/architecture.md): `hpcscope VERB [SUITE] [options]`; the store is
./hpcscope.db unless --db or HPCSCOPE_DB; a run is named by its id or `last`;
machine-readable output on stdout, human messages and progress on stderr; exit 0 success,
1 the measurement failed (results so far kept), 2 bad usage or input.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def sigint_held() -> Iterator[None]:
    """Load modules (numpy, scipy, matplotlib, ...) with SIGINT held back: Ctrl-C in the
    middle of a C extension's initialisation turns into an ImportError traceback, so a
    Ctrl-C while they load is taken once they have loaded and ends with the documented
    message and exit code."""
    held = {signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        pressed = signal.SIGINT in signal.sigpending()
        if pressed:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # consume the pending one
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
    if pressed:
        print("interrupted (nothing was being measured)", file=sys.stderr)
        sys.exit(1)


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM takes Ctrl-C's path (runner and backends handle it)


def main() -> None:
    """The `hpcscope` command. The command group loads with SIGINT held (sigint_held), and
    so does each command's module, which the group imports when that command runs.
    SIGTERM (kill, timeout, scancel of a job running hpcscope) is handled as Ctrl-C: the
    measurement processes are stopped, finished results stay and the run is marked
    interrupted. Without it the CLI died at once and left its launches running."""
    signal.signal(signal.SIGTERM, _terminate)
    with sigint_held():
        from hpcscope.cli.commands import main as command_group
    command_group()
