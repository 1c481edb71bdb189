"""Parsing of recorded SLURM outputs (tests/fixtures/slurm/README.md says how each was made)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcscope.launch import slurm_parse as sp
from hpcscope.launch.base import CollectReport, JobState

FIX = Path(__file__).parent / "fixtures" / "slurm"


def text(name: str) -> str:
    return (FIX / name).read_text()


def by_key(tasks: list[sp.TaskState]) -> dict[str, sp.TaskState]:
    return {t.key: t for t in tasks}


def test_sbatch_parsable_with_and_without_cluster() -> None:
    assert sp.parse_sbatch("24\n") == "24"
    assert sp.parse_sbatch("24;cluster1\n") == "24"
    with pytest.raises(sp.SlurmParseError, match="no job id"):
        sp.parse_sbatch("sbatch: error: something\n")


def test_squeue_one_line_per_array_task() -> None:
    tasks = by_key(sp.parse_squeue(text("squeue_running.txt")))
    assert set(tasks) == {"24_1", "24_2", "24_3", "24_4", "25"}
    assert tasks["24_1"].state == "RUNNING" and tasks["24_1"].raw_id == "26"
    assert tasks["24_2"].state == "PENDING" and tasks["24_2"].reason == "JobArrayTaskLimit"
    assert tasks["25"].reason == "PartitionConfig"
    assert tasks["25"].reason in sp.HOPELESS_REASONS
    assert tasks["24_1"].reason == ""  # "None" means no reason


def test_squeue_unsplit_range_expands() -> None:
    tasks = by_key(sp.parse_squeue(text("squeue_unsplit.txt")))
    assert set(tasks) == {"24_1", "24_2", "24_3", "24_4"}
    assert all(tasks[k].state == "PENDING" for k in ("24_2", "24_3", "24_4"))


def test_squeue_rejects_other_formats() -> None:
    with pytest.raises(sp.SlurmParseError, match="not"):
        sp.parse_squeue("  JOBID PARTITION NAME\n")


def test_scontrol_running_array() -> None:
    tasks = by_key(sp.parse_scontrol(text("scontrol_running.txt")))
    assert tasks["24_1"].state == "RUNNING" and tasks["24_1"].raw_id == "26"
    assert {k for k, t in tasks.items() if t.state == "PENDING"} == {"24_2", "24_3", "24_4"}
    assert tasks["24_3"].reason == "JobArrayTaskLimit"


def test_scontrol_finished_array() -> None:
    tasks = by_key(sp.parse_scontrol(text("scontrol_finished.txt")))
    assert tasks["24_1"].state == "COMPLETED" and tasks["24_1"].exit_code == 0
    assert tasks["24_2"].state == "FAILED" and tasks["24_2"].exit_code == 3
    assert tasks["24_2"].raw_id == "27" and tasks["24_2"].reason == "NonZeroExitCode"
    assert tasks["24_4"].raw_id == "24"  # the array's own record ran the last task
    assert "24_3" not in tasks  # cancelled while pending: SLURM forgot it


def test_scontrol_values_with_spaces() -> None:
    line = (
        "JobId=5 JobName=a b c UserId=root(0) JobState=TIMEOUT Reason=TimeLimit "
        "ExitCode=0:15 WorkDir=/tmp/x y"
    )
    (t,) = sp.parse_scontrol(line)
    assert t.state == "TIMEOUT" and t.exit_code == -15 and t.task is None and t.key == "5"


def test_sacct_with_accounting() -> None:
    tasks = by_key(sp.parse_sacct(text("sacct_accounting.txt")))
    assert tasks["24_1"].state == "COMPLETED"
    assert tasks["24_2"].exit_code == 3
    assert tasks["24_3"].state == "CANCELLED" and tasks["24_3"].slurm_state == "CANCELLED by 0"
    assert tasks["24_3"].exit_code == -15
    assert tasks["24_4"].state == "TIMEOUT"
    assert {"24_5", "24_6", "24_7"} <= set(tasks)
    assert tasks["31"].state == "NODE_FAIL"
    assert tasks["32"].state == "FAILED" and tasks["32"].slurm_state == "OUT_OF_MEMORY"
    assert not any("." in k for k in tasks)


def test_sacct_c_raw_ids() -> None:
    tasks = sp.parse_sacct(text("sacct_c.txt"))
    raw = {t.raw_id: t for t in tasks}
    assert raw["27"].state == "FAILED" and raw["27"].exit_code == 3 and raw["27"].task is None
    assert raw["25"].state == "CANCELLED"


def test_accounting_disabled_detected() -> None:
    assert sp.accounting_disabled(text("sacct_disabled.txt"))
    assert not sp.accounting_disabled(text("sacct_c.txt"))


def test_invalid_job_id_message() -> None:
    assert "invalid job id specified" in text("squeue_invalid.txt").lower()


def test_sinfo_partitions() -> None:
    assert sp.parse_sinfo_partitions(text("sinfo_partitions.txt")) == ({"debug": 4}, "debug")
    sizes, default = sp.parse_sinfo_partitions("batch*|10\nbatch*|2\ngpu|4\n")
    assert sizes == {"batch": 12, "gpu": 4} and default == "batch"


@pytest.mark.parametrize(
    "spec,expected",
    [
        ("1-5%2", [1, 2, 3, 4, 5]),
        ("[2-4%1]", [2, 3, 4]),
        ("1,3,7-11:2", [1, 3, 7, 9, 11]),
        ("7", [7]),
    ],
)
def test_expand_indexes(spec: str, expected: list[int]) -> None:
    assert sp.expand_indexes(spec) == expected


@pytest.mark.parametrize(
    "slurm,normal",
    [
        ("CANCELLED by 1000", "CANCELLED"),
        ("COMPLETING", "RUNNING"),
        ("CONFIGURING", "RUNNING"),
        ("OUT_OF_MEMORY", "FAILED"),
        ("BOOT_FAIL", "NODE_FAIL"),
        ("DEADLINE", "TIMEOUT"),
        ("REQUEUED", "PENDING"),
        ("PREEMPTED", "CANCELLED"),
    ],
)
def test_normal_states(slurm: str, normal: str) -> None:
    assert sp.normal_state(slurm) == normal


def test_exit_codes() -> None:
    assert sp.parse_exit_code("0:0") == 0
    assert sp.parse_exit_code("3:0") == 3
    assert sp.parse_exit_code("0:9") == -9
    assert sp.parse_exit_code("") is None
    with pytest.raises(sp.SlurmParseError):
        sp.parse_exit_code("x")


def test_a_failed_task_says_which_rank_died_and_how() -> None:
    """The batch state says FAILED; srun's own line names the node, the rank and the signal,
    and the collect summary prints it under the task (recorded stderr of a real failure)."""
    err = text("task_openmpi_segfault_in_init.err")
    detail = "\n".join(["SLURM FAILED (job 9_1), script x.sbatch", "stderr:", *err.splitlines()])
    report = CollectReport(9, [JobState(None, "FAILED", 143, detail, "9_1")])
    assert report.text().splitlines()[1:] == [
        "? (9_1): FAILED SLURM FAILED (job 9_1), script x.sbatch",
        "  srun: error: n2: task 2: Segmentation fault",
    ]
    quiet = CollectReport(9, [JobState(None, "FAILED", 1, "SLURM FAILED (job 9_1)\nboom", "9_1")])
    assert quiet.text().splitlines()[1:] == ["? (9_1): FAILED SLURM FAILED (job 9_1)"]
