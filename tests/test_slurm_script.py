"""Batch script generation: golden #SBATCH sets per placement and option, and quoting.

The hostile-input tests run the generated script body with fake srun/mpirun/module/scontrol
on PATH and check that nothing the user typed was executed.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from hpcscope.launch.slurm_script import (
    ScriptError,
    SlurmOptions,
    directives,
    group_jobs,
    render,
    safe_name,
    time_limit_seconds,
)
from hpcscope.machine.mpi import MpiSpec
from hpcscope.plan.job import Job

OMPI = MpiSpec("openmpi", "mpicc.openmpi", "mpirun.openmpi", "4.1.4")
MPICH = MpiSpec("mpich", "mpicc.mpich", "mpirun.mpich", "4.0.2")
RUNDIR = Path("/scratch/me/run-7")
HOSTILE = "a\"b$(touch /tmp/pwned)\nrm -rf `touch /tmp/pwned2`; x'y"


def p2p(
    place: str,
    cpus: list[int],
    nodes: int = 1,
    reps: int = 1,
    mpi: MpiSpec = OMPI,
    program: list[str] | None = None,
    name: str | None = None,
) -> list[Job]:
    return [
        Job(
            "p2p",
            name or f"{mpi.flavor}/{place}/r{r}",
            program or ["/b/p2p", "--x", "1"],
            mpi,
            2,
            cpus,
            nodes,
            tags={"placement": place, "repeat": r},
            timeout_s=900,
        )
        for r in range(1, reps + 1)
    ]


def sbatch_lines(jobs: list[Job], options: SlurmOptions | None = None) -> list[str]:
    (group,) = group_jobs(jobs)
    return directives(group, 7, RUNDIR, options or SlurmOptions())


# -- golden directive sets ----------------------------------------------------------------


def test_node_placement_two_nodes_one_task_each() -> None:
    assert sbatch_lines(p2p("node", [0, 0], nodes=2, reps=5)) == [
        "--job-name=hpcscope-7-openmpi_node",
        "--output=/scratch/me/run-7/slurm-%A_%a.out",
        "--chdir=/scratch/me/run-7",
        "--array=1-5%1",
        "--nodes=2",
        "--ntasks=2",
        "--ntasks-per-node=1",
        "--exclusive",
        "--time=16",
    ]


def test_socket_placement_one_node_one_task_per_socket() -> None:
    assert sbatch_lines(p2p("socket", [0, 16])) == [
        "--job-name=hpcscope-7-openmpi_socket",
        "--output=/scratch/me/run-7/slurm-%A_%a.out",
        "--chdir=/scratch/me/run-7",
        "--array=1-1%1",
        "--nodes=1",
        "--ntasks=2",
        "--ntasks-per-node=2",
        "--ntasks-per-socket=1",
        "--exclusive",
        "--time=16",
    ]


def test_core_placement_one_node_both_tasks_on_one_socket() -> None:
    lines = sbatch_lines(p2p("core", [0, 1], reps=3))
    assert "--ntasks-per-socket=2" in lines
    assert "--nodes=1" in lines and "--array=1-3%1" in lines


def test_collective_many_tasks_per_node() -> None:
    job = Job(
        "coll", "openmpi/allreduce/r1", ["/b/coll"], OMPI, ranks=32, nodes=4, tags={"repeat": 1}
    )
    lines = sbatch_lines([job])
    assert lines[4:7] == ["--nodes=4", "--ntasks=32", "--ntasks-per-node=8"]


def test_all_pass_through_options_in_order() -> None:
    options = SlurmOptions(
        partition="batch",
        account="proj42",
        time="1:30:00",
        qos="short",
        constraint="intel&ib",
        mail_type="END,FAIL",
        mail_user="me@example.org",
        exclusive=False,
        array_limit=2,
        sbatch_args=["--gres=gpu:1", "--comment=hpcscope run", "--hold"],
    )
    assert sbatch_lines(p2p("node", [0, 0], nodes=2, reps=4), options)[3:] == [
        "--array=1-4%2",
        "--nodes=2",
        "--ntasks=2",
        "--ntasks-per-node=1",
        "--time=1:30:00",
        "--partition=batch",
        "--account=proj42",
        "--qos=short",
        "--constraint=intel&ib",
        "--mail-type=END,FAIL",
        "--mail-user=me@example.org",
        "--gres=gpu:1",
        '--comment="hpcscope run"',
        "--hold",
    ]


def test_time_in_minutes_and_rejected_time() -> None:
    assert "--time=10" in sbatch_lines(p2p("core", [0, 1]), SlurmOptions(time="10"))
    assert "--time=2-00:00:00" in sbatch_lines(p2p("core", [0, 1]), SlurmOptions(time="2-00:00:00"))
    with pytest.raises(ScriptError, match="not a SLURM time limit"):
        sbatch_lines(p2p("core", [0, 1]), SlurmOptions(time="10 minutes"))


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("10", 600),
        ("1:30", 90),
        ("1:30:00", 5400),
        ("2-0", 172800),
        ("1-02:03", 93780),
        ("1-00:00:05", 86405),
    ],
)
def test_time_limit_in_seconds_for_every_sbatch_form(text: str, seconds: int) -> None:
    assert time_limit_seconds(text) == seconds


@pytest.mark.parametrize("text", ["0", "0:00:00", "ten", "1h", "-5"])
def test_zero_or_malformed_time_limit_is_refused(text: str) -> None:
    with pytest.raises(ScriptError, match="--time"):
        time_limit_seconds(text)


def test_percent_in_run_directory_is_escaped() -> None:
    (group,) = group_jobs(p2p("core", [0, 1]))
    lines = directives(group, 7, Path("/s/100%"), SlurmOptions())
    assert lines[1] == "--output=/s/100%%/slurm-%A_%a.out"


# -- grouping and launch lines ---------------------------------------------------------------


def test_repeats_group_into_one_array_per_placement_and_mpi() -> None:
    jobs = []
    for r in (1, 2, 3):  # the p2p suite's order: repeat outermost
        jobs += p2p("core", [0, 1], name=f"openmpi/core/r{r}")
        jobs += p2p("node", [0, 0], nodes=2, name=f"openmpi/node/r{r}")
        jobs += p2p("core", [0, 1], mpi=MPICH, name=f"mpich/core/r{r}")
    groups = group_jobs(jobs)
    assert [(g.name, [j.name for j in g.jobs]) for g in groups] == [
        ("openmpi_core", ["openmpi/core/r1", "openmpi/core/r2", "openmpi/core/r3"]),
        ("openmpi_node", ["openmpi/node/r1", "openmpi/node/r2", "openmpi/node/r3"]),
        ("mpich_core", ["mpich/core/r1", "mpich/core/r2", "mpich/core/r3"]),
    ]


def launch(jobs: list[Job], options: SlurmOptions | None = None) -> str:
    (group,) = group_jobs(jobs)
    script = render(group, 7, RUNDIR, options or SlurmOptions())
    return next(line for line in script.splitlines() if "task-$task.jsonl" in line)


def test_srun_lines_bind_with_map_cpu() -> None:
    assert launch(p2p("core", [2, 3])) == (
        "srun --mpi=pmix --nodes=1 --ntasks=2 --ntasks-per-node=2 --cpu-bind=map_cpu:2,3 "
        '--kill-on-bad-exit=1 /b/p2p --x 1 >"$group/task-$task.jsonl" '
        '2>"$group/task-$task.err"'
    )
    assert launch(p2p("node", [0, 0], nodes=2, mpi=MPICH)).startswith(
        "srun --mpi=pmi2 --nodes=2 --ntasks=2 --ntasks-per-node=1 --cpu-bind=map_cpu:0 "
    )
    # A shared allocation has no guaranteed CPUs: no map, SLURM binds within what it gave.
    assert "map_cpu" not in launch(p2p("core", [2, 3]), SlurmOptions(exclusive=False))
    assert "--mpi=pmi2" in launch(p2p("core", [0, 1]), SlurmOptions(srun_mpi="pmi2"))


def test_mpirun_lines() -> None:
    mpich = launch(p2p("core", [2, 3], mpi=MPICH), SlurmOptions(launcher="mpirun"))
    assert mpich.startswith("mpirun.mpich -genvnone -n 2 -ppn 2 -bind-to user:2,3 /b/p2p")
    ompi_node = launch(p2p("node", [0, 0], nodes=2), SlurmOptions(launcher="mpirun"))
    assert ompi_node.startswith(
        'mpirun.openmpi -np 2 --rankfile "$rankfile" --mca rmaps_rank_file_physical 1 /b/p2p'
    )
    ompi_free = Job("coll", "openmpi/x/r1", ["/b/coll"], OMPI, ranks=8, nodes=2)
    assert launch([ompi_free], SlurmOptions(launcher="mpirun")).startswith(
        "mpirun.openmpi -np 8 --map-by ppr:4:node /b/coll"
    )


def test_modules_prelude_and_env() -> None:
    (group,) = group_jobs(p2p("core", [0, 1]))
    group.jobs[0].env["OMPI_MCA_btl"] = "self,tcp"
    script = render(
        group, 7, RUNDIR, SlurmOptions(modules=["openmpi/4.1.6"], prelude=["ulimit -s unlimited"])
    )
    body = script.splitlines()
    assert "module load openmpi/4.1.6" in body
    assert "ulimit -s unlimited" in body
    assert "export OMPI_MCA_btl=self,tcp" in body
    assert body.index("module load openmpi/4.1.6") < body.index("ulimit -s unlimited")


# -- quoting and hostile input ----------------------------------------------------------------


def test_hostile_job_name_is_sanitised_in_directives_and_comments() -> None:
    jobs = p2p("core", [0, 1], name=HOSTILE)
    (group,) = group_jobs(jobs)
    script = render(group, 7, RUNDIR, SlurmOptions())
    assert safe_name(HOSTILE) == group.name
    assert set(group.name) <= set(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
    )
    for line in script.splitlines():
        if line.startswith("#"):
            assert "$(" not in line and "`" not in line and '"' not in line[1:].split("=")[0]
    assert "--job-name=hpcscope-7-" + group.name in script


@pytest.mark.parametrize("field", ["partition", "account", "qos", "constraint", "mail_user"])
def test_newline_in_directive_value_is_refused(field: str) -> None:
    options = SlurmOptions(**{field: "ok\n#SBATCH --wrap=touch /tmp/pwned"})
    with pytest.raises(ScriptError, match="newline or control character"):
        sbatch_lines(p2p("core", [0, 1]), options)


def test_bad_sbatch_args_refused() -> None:
    with pytest.raises(ScriptError, match="must start"):
        sbatch_lines(p2p("core", [0, 1]), SlurmOptions(sbatch_args=["gres=gpu:1"]))
    with pytest.raises(ScriptError, match="double quote"):
        sbatch_lines(p2p("core", [0, 1]), SlurmOptions(sbatch_args=['--comment=a"b']))
    with pytest.raises(ScriptError, match="newline"):
        sbatch_lines(p2p("core", [0, 1]), SlurmOptions(sbatch_args=["--comment=a\nb"]))


def test_bad_env_name_refused() -> None:
    (group,) = group_jobs(p2p("core", [0, 1]))
    group.jobs[0].env["A;touch /tmp/pwned"] = "1"
    with pytest.raises(ScriptError, match="not valid in a shell"):
        render(group, 7, RUNDIR, SlurmOptions())


def _fake_bin(directory: Path, name: str, body: str) -> None:
    path = directory / name
    path.write_text("#!/bin/bash\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.mark.parametrize("launcher,mpi", [("srun", OMPI), ("mpirun", OMPI), ("mpirun", MPICH)])
def test_hostile_arguments_are_not_executed(tmp_path: Path, launcher: str, mpi: MpiSpec) -> None:
    """bash -n passes, and running the body with fake launchers executes nothing the user
    typed: the program's arguments arrive as exact, single arguments."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    argfile = tmp_path / "argv.txt"
    # The fake launcher records its argv one per line (NUL-safe enough: no NULs here).
    record = f'for a in "$@"; do printf "%s\\0" "$a"; done >{argfile}'
    for name in ("srun", "mpirun.openmpi", "mpirun.mpich"):
        _fake_bin(bindir, name, record)
    _fake_bin(bindir, "scontrol", "echo n1")
    _fake_bin(bindir, "module", 'touch "$(dirname "$0")/../module-called"')
    rundir = tmp_path / "run $(touch pwned3) dir"
    rundir.mkdir()
    program = ["/b/p2p", HOSTILE, "$(touch pwned4)", "`touch pwned5`", "a b", "'"]
    jobs = p2p("core", [0, 1], mpi=mpi, program=program, name=HOSTILE)
    jobs[0].env["HPC_NOTE"] = "$(touch pwned6)"
    (group,) = group_jobs(jobs)
    script = render(
        group,
        7,
        rundir,
        SlurmOptions(launcher=launcher, modules=["x; touch pwned7"], partition="p"),
    )
    path = tmp_path / "job.sbatch"
    path.write_text(script)
    assert subprocess.run(["bash", "-n", str(path)], timeout=10).returncode == 0
    env = dict(
        os.environ,
        PATH=f"{bindir}:{os.environ['PATH']}",
        SLURM_ARRAY_TASK_ID="1",
        SLURM_JOB_ID="99",
        SLURM_JOB_NODELIST="n1",
        HOME=str(tmp_path),
    )
    # `module` is a shell function on clusters; here a fake executable stands in for it.
    proc = subprocess.run(
        ["bash", str(path)], cwd=tmp_path, env=env, timeout=20, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    pwned = [p for p in (Path("/tmp/pwned"), Path("/tmp/pwned2")) if p.exists()]
    assert not pwned
    assert not any(p.name.startswith("pwned") for p in tmp_path.rglob("*")), sorted(
        str(p) for p in tmp_path.rglob("*")
    )
    argv = argfile.read_text().split("\0")[:-1]
    assert argv[-len(program) :] == program
    task = rundir / group.name
    assert (task / "task-1.rc").read_text().strip() == "0"
    assert (task / "task-1.jobid").read_text().strip() == "99"
