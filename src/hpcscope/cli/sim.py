"""`hpcscope sim`: the simulated clusters (SimGrid) that `run SUITE --on sim` uses.

platforms (the presets, their parameters and where every number comes from), platform
(write one as SimGrid XML), calibrate (fit lane latency and bandwidth to a stored p2p
run). The simulations themselves run through `hpcscope run ... --on sim`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import click

from hpcscope import runner
from hpcscope.analysis.sim_calibrate import CalibrationError, fit_alpha_beta
from hpcscope.cli.common import err, handle_errors, store_of
from hpcscope.formatting import format_bytes
from hpcscope.machine import sim_machine
from hpcscope.machine.sim_platform import PRESETS, PlatformError, platform_xml
from hpcscope.results import stats


@click.group()
def sim() -> None:
    """Simulated clusters (SimGrid SMPI): presets, platform files, calibration.

    \b
    Example: hpcscope sim platforms
             hpcscope sim platform hydra -o hydra.xml
             hpcscope run lanes --on sim --platform hydra:nodes=4,cores_per_socket=2
    """


def _platform(value: str) -> sim_machine.SimMachine:
    try:
        return sim_machine.resolve(value)
    except PlatformError as exc:
        text = str(exc)
        raise runner.UsageError(text if text.startswith("--") else f"{value}: {text}") from exc


@sim.command("platforms")
@click.option("--json", "as_json", is_flag=True, help="Print the parameters as JSON.")
@handle_errors
def platforms(as_json: bool) -> None:
    """The preset platforms with their parameters and sources.

    \b
    Example: hpcscope sim platforms
    Any field can be changed for one run: --platform hydra:nodes=4,cores_per_socket=2.
    """
    machines = [sim_machine.from_spec(spec) for spec in PRESETS.values()]
    if as_json:
        click.echo(json.dumps([m.parameters() for m in machines], indent=2))
        return
    for m in machines:
        s = m.spec
        assert s is not None  # presets always have a spec
        click.echo(
            f"{s.name}: {s.nodes} nodes x {s.sockets} sockets x {s.cores_per_socket} cores "
            f"({s.cores} cores), {s.lanes} lane(s) {s.lane_placement}\n"
            f"  lane {s.lane_bandwidth / 1e9:g} GB/s, {s.lane_latency * 1e6:g} us one way; "
            f"socket link {s.intra_bandwidth / 1e9:g} GB/s, {s.intra_latency * 1e6:g} us; "
            f"in-socket {s.loopback_bandwidth / 1e9:g} GB/s, {s.loopback_latency * 1e6:g} us; "
            f"switch {s.switch}\n  source: {s.source}\n"
        )


@sim.command("platform")
@click.argument("name")
@click.option(
    "-o", "--out", "out", type=click.Path(dir_okay=False), required=True, help="XML file."
)
@click.option("--ppn", type=int, default=None, help="Also write OUT.hostfile for this ppn.")
@handle_errors
def platform(name: str, out: str, ppn: int | None) -> None:
    """Write a preset (or a preset with changes) as a SimGrid platform file.

    \b
    Example: hpcscope sim platform hydra -o hydra.xml
             hpcscope sim platform jupiter:nodes=4 -o j4.xml --ppn 16
    """
    machine = _platform(name)
    if machine.spec is None:
        raise runner.UsageError(f"{name}: already a platform file; nothing to write")
    Path(out).write_text(machine.xml)
    err.print(f"wrote {out}: {machine.label}, {machine.nodes} nodes")
    if ppn is not None:
        try:
            text = machine.hostfile(ppn)
        except PlatformError as exc:
            raise runner.UsageError(str(exc)) from exc
        Path(out + ".hostfile").write_text(text)
        err.print(f"wrote {out}.hostfile: {machine.nodes} x {ppn} ranks")


def latency_points(samples: list[dict], placement: str) -> dict[str, dict[int, float]]:
    """{mpi: {bytes: median one-way latency (s)}} over every launch of the placement."""
    groups: dict[str, dict[int, list[float]]] = {}
    for s in samples:
        if s.get("metric") != "latency" or (s.get("tags") or {}).get("placement") != placement:
            continue
        mpi = str((s.get("tags") or {}).get("mpi", "?"))
        size = int((s.get("params") or {}).get("bytes", 0))
        groups.setdefault(mpi, {}).setdefault(size, []).extend(float(v) for v in s["values"])
    return {
        mpi: {size: stats.summarize(vals).median * 1e-6 for size, vals in sorted(by.items())}
        for mpi, by in groups.items()
    }


@sim.command("calibrate")
@click.argument("run_ref", metavar="RUN")
@click.option(
    "-o", "--out", "out", type=click.Path(dir_okay=False), required=True, help="XML file."
)
@click.option("--placement", default="core", show_default=True, help="Which p2p placement.")
@click.option(
    "--mpi", "mpi_name", default=None, help="Which MPI of the run (default: the only one)."
)
@click.option("--base", default="hydra", show_default=True, help="Preset whose shape is kept.")
@click.pass_context
@handle_errors
def calibrate(ctx, run_ref: str, out: str, placement: str, mpi_name: str | None, base: str) -> None:
    """Fit lane latency and bandwidth to a stored p2p run and write a platform.

    One alpha-beta line over all sizes (analysis/sim_calibrate.py, weights 1/t^2): t(S) =
    L + S/B is exactly what the simulation computes with its neutral factors, so the
    error printed per size is the error of the written platform on an idle route.

    \b
    Example: hpcscope run p2p --placements core --tests latency
             hpcscope sim calibrate last -o fitted.xml --base jupiter
             hpcscope run lanes --on sim --platform fitted.xml
    """
    store = store_of(ctx)
    run_id = store.resolve(run_ref)
    points = latency_points(store.samples(run_id, benchmark="p2p"), placement)
    if not points:
        raise runner.UsageError(
            f"run {run_id} has no p2p latency samples at placement {placement!r}; run "
            f"`hpcscope run p2p --placements {placement} --tests latency` first"
        )
    if mpi_name is None and len(points) > 1:
        raise runner.UsageError(
            f"run {run_id} has latency of {', '.join(points)}; choose one with --mpi"
        )
    mpi = mpi_name or next(iter(points))
    if mpi not in points:
        raise runner.UsageError(f"--mpi {mpi}: run {run_id} has {', '.join(points)}")
    sizes, times = zip(*points[mpi].items())
    try:
        fit = fit_alpha_beta(sizes, times, breakpoints=(0,))
    except CalibrationError as exc:
        raise runner.UsageError(f"run {run_id}: {exc}") from exc
    machine = _platform(base)
    assert machine.spec is not None
    spec = replace(
        machine.spec,
        name=f"{machine.spec.name}-fitted",
        lane_latency=fit.lane_latency,
        lane_bandwidth=fit.lane_bandwidth,
        source=(
            f"{machine.spec.name} shape; lane latency and bandwidth fitted to run {run_id} "
            f"({mpi}, p2p latency at placement {placement}, {len(sizes)} sizes) by "
            f"hpcscope sim calibrate. Other numbers as in {machine.spec.name}: "
            f"{machine.spec.source}"
        ),
    )
    try:
        Path(out).write_text(platform_xml(spec))
    except PlatformError as exc:
        raise runner.UsageError(f"the fit gives an impossible platform: {exc}") from exc
    click.echo(
        f"fitted to run {run_id} ({mpi}, {placement}): lane latency "
        f"{fit.lane_latency * 1e6:.3f} us, lane bandwidth {fit.lane_bandwidth / 1e9:.3f} GB/s"
    )
    click.echo(f"{'size':>10}  {'measured (us)':>14}  {'model (us)':>11}  {'error':>7}")
    for size, t, e, m in zip(sizes, times, fit.relative_errors(sizes, times), fit.predicted(sizes)):
        click.echo(f"{format_bytes(size):>10}  {t * 1e6:>14.3f}  {m * 1e6:>11.3f}  {e:>+7.1%}")
    err.print(f"wrote {out} ({spec.name}); use it with --platform {out}")
