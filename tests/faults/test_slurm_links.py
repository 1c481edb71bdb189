"""SLURM job scripts never write through an entry planted in their folder (issue 43,
finding 2), and each submitted run gets a new private folder.

The generated script runs with a fake `srun` (and `mpirun`, `scontrol`) on PATH in a run
folder where the task's files are planted as links: to a victim file, to a FIFO (bash's
noclobber alone would open it), dangling; the group folder itself as a link. Each time:
the victim is unchanged, the script stops before starting the program with one line
naming the planted entry, exit 2. Without planted entries the same script writes all
four files."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from hpcscope import safe_write
from hpcscope.launch.slurm import SlurmBackend
from hpcscope.launch.slurm_script import SlurmOptions, group_jobs, render
from hpcscope.machine.mpi import MpiSpec
from hpcscope.plan.job import Job
from hpcscope.results.store import Store

OMPI = MpiSpec("openmpi", "mpicc.openmpi", "mpirun.openmpi", "4.1.4")
PRECIOUS = b"precious\n"


def _job(name: str = "openmpi/core/r1") -> Job:
    return Job("p2p", name, ["/b/p2p", "--x", "1"], OMPI, 2, [0, 1], 1, tags={"placement": "core"})


def _fake_bins(folder: Path) -> Path:
    """srun and mpirun print a record and a stderr line and leave a mark that they ran."""
    bindir = folder / "bin"
    bindir.mkdir()
    body = f'#!/bin/bash\ntouch {folder}/ran\necho \'{{"type":"meta"}}\'\necho oops >&2\n'
    for name in ("srun", "mpirun.openmpi"):
        (bindir / name).write_text(body)
        (bindir / name).chmod(0o755)
    (bindir / "scontrol").write_text("#!/bin/sh\necho n1\n")
    (bindir / "scontrol").chmod(0o755)
    return bindir


def _run_script(tmp_path: Path, launcher: str = "srun") -> tuple[subprocess.CompletedProcess, Path]:
    rundir = tmp_path / "run"
    rundir.mkdir(exist_ok=True)
    (group,) = group_jobs([_job()])
    options = SlurmOptions(launcher=launcher)
    script = tmp_path / "job.sbatch"
    script.write_text(render(group, 7, rundir, options))
    env = dict(
        os.environ,
        PATH=f"{_fake_bins(tmp_path)}:{os.environ['PATH']}",
        SLURM_ARRAY_TASK_ID="1",
        SLURM_JOB_ID="99",
        SLURM_JOB_NODELIST="n1",
    )
    proc = subprocess.run(
        ["bash", str(script)], cwd=tmp_path, env=env, timeout=20, capture_output=True, text=True
    )
    return proc, rundir / group.name


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim"
    victim.write_bytes(PRECIOUS)
    return victim


def test_a_clean_run_writes_all_four_files(tmp_path: Path) -> None:
    proc, group = _run_script(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (group / "task-1.jobid").read_text() == "99\n"
    assert (group / "task-1.jsonl").read_text() == '{"type":"meta"}\n'
    assert (group / "task-1.err").read_text() == "oops\n"
    assert (group / "task-1.rc").read_text() == "0\n"
    assert stat.S_IMODE(group.stat().st_mode) == 0o700


@pytest.mark.parametrize("name", ["jobid", "jsonl", "err", "rc"])
@pytest.mark.parametrize("kind", ["file", "fifo", "dangling"])
def test_a_planted_task_file_is_refused(tmp_path: Path, name: str, kind: str) -> None:
    group = tmp_path / "run" / "openmpi_core"
    group.mkdir(parents=True)
    planted = group / f"task-1.{name}"
    if kind == "file":
        target = _victim(tmp_path)
    elif kind == "fifo":  # bash's noclobber opens a FIFO (and /dev/null) all the same
        target = tmp_path / "fifo"
        os.mkfifo(target)
    else:
        target = tmp_path / "missing"
    os.symlink(target, planted)
    proc, _ = _run_script(tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines == [
        f"hpcscope: refusing {planted}: it already exists (planted?); remove it or submit again"
    ]
    assert not (tmp_path / "ran").exists(), "the program started in spite of the planted entry"
    assert planted.is_symlink()
    if kind == "file":
        assert target.read_bytes() == PRECIOUS
    elif kind == "dangling":
        assert not target.exists()


def test_a_planted_rankfile_is_refused(tmp_path: Path) -> None:
    group = tmp_path / "run" / "openmpi_core"
    group.mkdir(parents=True)
    victim = _victim(tmp_path)
    os.symlink(victim, group / "task-1.rankfile")
    proc, _ = _run_script(tmp_path, launcher="mpirun")
    assert proc.returncode == 2, proc.stderr
    assert f"refusing {group / 'task-1.rankfile'}" in proc.stderr
    assert victim.read_bytes() == PRECIOUS
    assert not (tmp_path / "ran").exists()


def test_a_planted_group_folder_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "run").mkdir()
    os.symlink(elsewhere, tmp_path / "run" / "openmpi_core")
    proc, group = _run_script(tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"hpcscope: refusing {group}: it is not a folder of this user's own (planted?); "
        "remove it or submit again"
    ]
    assert list(elsewhere.iterdir()) == []


# -- the run folder: new and private for each submitted run -------------------------------


class FakeSlurm:
    """sbatch answers job ids; every other command fails (no partition check)."""

    def __init__(self) -> None:
        self.next_id = 100

    def __call__(self, argv, timeout=None, env=None, cwd=None):
        if argv[0] == "sbatch":
            self.next_id += 1
            return subprocess.CompletedProcess(argv, 0, f"{self.next_id}\n", "")
        return subprocess.CompletedProcess(argv, 1, "", "not here")


def test_each_run_gets_a_new_private_folder(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        runs = [store.create_run("p2p", backend="slurm") for _ in range(2)]
        backend = SlurmBackend(store, rundir=tmp_path / "out" / "slurm", runner=FakeSlurm())
        folders = []
        for run_id in runs:
            backend.submit(run_id, [_job()])
            folders.append(Path(store.get_run_backend_data(run_id)["slurm"]["rundir"]))
    assert folders[0] != folders[1]
    for run_id, folder in zip(runs, folders):
        assert folder.parent == tmp_path / "out" / "slurm"
        assert folder.name.startswith(f"run-{run_id}.") and len(folder.name) > 8
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert (folder / "openmpi_core.sbatch").is_file()


def test_a_planted_slurm_folder_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "out").mkdir()
    os.symlink(elsewhere, tmp_path / "out" / "slurm")
    with Store(tmp_path / "s.db") as store:
        run_id = store.create_run("p2p", backend="slurm")
        backend = SlurmBackend(store, rundir=tmp_path / "out" / "slurm", runner=FakeSlurm())
        with pytest.raises(safe_write.UnsafeFolder) as refused:
            backend.submit(run_id, [_job()])
    assert str(refused.value) == (
        f"refusing {tmp_path / 'out' / 'slurm'}: it is a symbolic link (planted?); remove it "
        "or choose another output folder (-o/--out)"
    )
    assert list(elsewhere.iterdir()) == []
    # --slurm-dir names the folder itself: a link there is the user's own choice
    with Store(tmp_path / "s.db") as store:
        backend = SlurmBackend(
            store, rundir=tmp_path / "out" / "slurm", runner=FakeSlurm(), rundir_named=True
        )
        backend.submit(run_id, [_job()])
    assert [p.name.startswith(f"run-{run_id}.") for p in elsewhere.iterdir()] == [True]
