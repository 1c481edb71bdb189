"""`hpcscope sim`: the simulated clusters (SimGrid) that `run SUITE --on sim` uses.

platforms (the presets, their parameters and where every number comes from), platform
(write one as SimGrid XML), calibrate (fit a link and SMPI's per-size factors to a stored
p2p run). The simulations themselves run through `hpcscope run ... --on sim`.
"""

from __future__ import annotations

import json
from dataclasses import replace

import click

from hpcscope import build, runner, safe_write
from hpcscope.analysis.sim_calibrate import CalibrationError, fit_alpha_beta, fit_piecewise
from hpcscope.cli.common import err, handle_errors, nonempty, store_of, writes_to
from hpcscope.formatting import format_bytes
from hpcscope.launch.sim_pingpong import PingPongError, simulated_latency
from hpcscope.machine import mpi as mpi_mod
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
    nonempty(out, "-o/--out", "hydra.xml")
    writes_to(f"the platform file {out}", "choose another file (-o/--out)")
    machine = _platform(name)
    if machine.spec is None:
        raise runner.UsageError(f"{name}: already a platform file; nothing to write")
    safe_write.write_text(out, machine.xml)
    err.print(f"wrote {out}: {machine.label}, {machine.nodes} nodes")
    if ppn is not None:
        try:
            text = machine.hostfile(ppn)
        except PlatformError as exc:
            raise runner.UsageError(str(exc)) from exc
        safe_write.write_text(out + ".hostfile", text)
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


# Which route of the platform a p2p placement crosses (launch/sim.py's hostfile): core =
# both ranks on one host (its loopback link), node = two nodes over lane 0.
CALIBRATED_LINKS = {
    "core": ("loopback_latency", "loopback_bandwidth", "loopback"),
    "node": ("lane_latency", "lane_bandwidth", "lane"),
}


@sim.command("calibrate")
@click.argument("run_ref", metavar="RUN")
@click.option(
    "-o", "--out", "out", type=click.Path(dir_okay=False), required=True, help="XML file."
)
@click.option(
    "--placement",
    type=click.Choice(sorted(CALIBRATED_LINKS)),
    default="core",
    show_default=True,
    help="Which p2p placement to fit: core sets the in-socket (loopback) link, node the lanes.",
)
@click.option(
    "--mpi", "mpi_name", default=None, help="Which MPI of the run (default: the only one)."
)
@click.option("--base", default="hydra", show_default=True, help="Preset whose shape is kept.")
@click.option(
    "--tolerance",
    type=click.FloatRange(0.001, 1),
    default=0.05,
    show_default=True,
    help="Largest relative error per size the fit aims for (it adds size segments until then, "
    "at most 12).",
)
@click.option(
    "--check/--no-check",
    default=True,
    show_default=True,
    help="Simulate the written platform's ping-pong, correct the fit once by what SMPI adds, "
    "and print measured vs simulated per size.",
)
@click.pass_context
@handle_errors
def calibrate(
    ctx,
    run_ref: str,
    out: str,
    placement: str,
    mpi_name: str | None,
    base: str,
    tolerance: float,
    check: bool,
) -> None:
    """Fit a platform to a stored p2p run: α-β per message-size segment, as SMPI's own
    calibration does.

    The placement's link gets the fitted latency and bandwidth, and SMPI's lat-factor and
    bw-factor get one value per segment (analysis/sim_calibrate.py; the segments are chosen
    among the measured sizes until every size is within --tolerance). The error printed
    per size is the model's on an idle route. With --check (the default) the written
    platform's ping-pong is simulated; where SMPI adds its own cost (tens of ns per
    message) the fit is corrected once by the simulated/measured ratio and simulated
    again, and the table shows measured vs simulated.

    \b
    Example: hpcscope run p2p --placements core --tests latency
             hpcscope sim calibrate last -o fitted.xml --base jupiter
             hpcscope run p2p --on sim --platform fitted.xml --placements core --tests latency
    """
    nonempty(out, "-o/--out", "fitted.xml")
    writes_to(f"the platform file {out}", "choose another file (-o/--out)")
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
    machine = _platform(base)
    assert machine.spec is not None
    fit, spec = _fit_platform(machine.spec, sizes, times, tolerance, placement, run_id, mpi)
    _write(out, spec)
    link_name = CALIBRATED_LINKS[placement][2]
    click.echo(
        f"fitted to run {run_id} ({mpi}, {placement}): {link_name} latency "
        f"{fit.lane_latency * 1e6:.3f} us, {link_name} bandwidth "
        f"{fit.lane_bandwidth / 1e9:.3f} GB/s, {len(fit.segments)} size segment(s)"
    )
    if not check:
        click.echo(f"{'size':>10}  {'measured (µs)':>14}  {'model (µs)':>11}  {'error':>7}")
        for size, t, m in zip(sizes, times, fit.predicted(sizes)):
            click.echo(
                f"{format_bytes(size):>10}  {t * 1e6:>14.3f}  {m * 1e6:>11.3f}  {m / t - 1:>+7.1%}"
            )
        err.print(f"wrote {out} ({spec.name}); use it with --platform {out}")
        return
    simulated = _simulate(out, placement, max(sizes))
    errors = [simulated[s] / t - 1 for s, t in zip(sizes, times) if s in simulated]
    if errors and max(map(abs, errors)) > tolerance:
        # Same segments, values corrected: what SMPI adds per message (tens of ns) moves
        # each segment's line, not its kinks.
        corrected = [t * t / simulated[s] if s in simulated else t for s, t in zip(sizes, times)]
        breakpoints = [segment.start for segment in fit.segments]
        fit, spec = _fit_platform(
            machine.spec, sizes, corrected, tolerance, placement, run_id, mpi, breakpoints
        )
        _write(out, spec)
        simulated = _simulate(out, placement, max(sizes))
        click.echo("corrected once by the simulated/measured ratio per size (SMPI's own costs)")
    click.echo(f"{'size':>10}  {'measured (µs)':>14}  {'simulated (µs)':>15}  {'error':>7}")
    for size, t in zip(sizes, times):
        sim_t = simulated.get(size)
        if sim_t is None:
            click.echo(f"{format_bytes(size):>10}  {t * 1e6:>14.3f}  {'-':>15}  {'-':>7}")
        else:
            click.echo(
                f"{format_bytes(size):>10}  {t * 1e6:>14.3f}  {sim_t * 1e6:>15.3f}  "
                f"{sim_t / t - 1:>+7.1%}"
            )
    err.print(f"wrote {out} ({spec.name}); use it with --platform {out}")


def _fit_platform(base, sizes, times, tolerance, placement, run_id, mpi, breakpoints=None):
    """(fit, PlatformSpec): base with the placement's link and SMPI's factors fitted,
    on the given breakpoints or on those fit_piecewise chooses."""
    try:
        if breakpoints is None:
            fit = fit_piecewise(sizes, times, tolerance=tolerance)
        else:
            fit = fit_alpha_beta(sizes, times, breakpoints, min_sizes=1)
    except CalibrationError as exc:
        raise runner.UsageError(f"run {run_id}: {exc}") from exc
    latency_field, bandwidth_field, link_name = CALIBRATED_LINKS[placement]
    spec = replace(
        base,
        name=f"{base.name}-fitted",
        lat_factor=fit.lat_factor_cfg(),
        bw_factor=fit.bw_factor_cfg(),
        source=(
            f"{base.name} shape; {link_name} latency and bandwidth and SMPI's per-size "
            f"factors ({len(fit.segments)} segments) fitted to run {run_id} ({mpi}, p2p "
            f"latency at placement {placement}, {len(sizes)} sizes) by hpcscope sim calibrate. "
            f"Other numbers as in {base.name}: {base.source}"
        ),
        **{latency_field: fit.lane_latency, bandwidth_field: fit.lane_bandwidth},
    )
    return fit, spec


def _write(out: str, spec) -> None:
    try:
        safe_write.write_text(out, platform_xml(spec))
    except PlatformError as exc:
        raise runner.UsageError(f"the fit gives an impossible platform: {exc}") from exc


def _simulate(out: str, placement: str, max_size: int) -> dict[int, float]:
    try:
        smpi = mpi_mod.discover("smpi")[0]
        return simulated_latency(sim_machine.from_file(out), placement, smpi, int(max_size))
    except (mpi_mod.MpiNotFound, build.BuildError, PingPongError, PlatformError) as exc:
        raise runner.UsageError(
            f"wrote {out}, but its check failed: {exc}; --no-check skips the check"
        ) from exc
