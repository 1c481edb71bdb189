"""The disk benchmark never writes through links planted in its --dir (issue 43, finding
1): 20,000 links in a shared --disk-dir once made a 10-byte file elsewhere 256 MB.

bench/node/disk.c now makes a new private folder in --dir (mkdtemp, mode 0700) and
creates its files there with O_CREAT | O_EXCL | O_NOFOLLOW. Here 2,000 links are planted
under the names the old program chose (hpcscope-disk.<pid>.<thread>, for the next 1,000
process ids), all pointing to one victim file; the program runs, the victim must be
unchanged, every link still a link, and nothing of the program left behind."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from test_node_kernels import bindir, run  # noqa: F401  (the fixture builds bench/node)

PRECIOUS = b"precious\n"


def test_disk_ignores_links_planted_in_its_folder(bindir, tmp_path: Path) -> None:  # noqa: F811
    shared = tmp_path / "shared"
    shared.mkdir()
    victim = tmp_path / "victim"
    victim.write_bytes(PRECIOUS)
    last = int(Path("/proc/sys/kernel/ns_last_pid").read_text())
    planted = {f"hpcscope-disk.{pid}.{t}" for pid in range(last + 1, last + 1001) for t in (0, 1)}
    for name in planted:
        os.symlink(victim, shared / name)
    _, recs = run(
        bindir,
        "disk",
        f"--dir={shared}",
        "--size=4M",
        "--blocks=1M",
        "--threads=2",
        "--tests=seqwrite",
        "--seconds=0.05",
        "--reps=1",
    )
    assert [r for r in recs if r.get("metric") == "bandwidth"]
    assert victim.read_bytes() == PRECIOUS
    assert {p.name for p in shared.iterdir()} == planted  # the private folder is gone
    assert all((shared / name).is_symlink() for name in planted)


def test_disk_in_a_folder_it_cannot_write_says_so(bindir, tmp_path: Path) -> None:  # noqa: F811
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o500)
    try:
        if os.access(shared, os.W_OK):  # root writes anyway: a missing folder instead
            shared = tmp_path / "missing"
        p = subprocess.run(
            [str(bindir / "disk"), f"--dir={shared}", "--size=4M", "--blocks=1M"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        (tmp_path / "shared").chmod(0o700)
    assert p.returncode == 2
    assert f"cannot create a folder in --dir {shared}" in p.stdout


def test_a_named_output_replaces_a_planted_link(bindir, tmp_path: Path) -> None:  # noqa: F811
    """--out FILE (bench/common/out_file.c): a link planted under the name is replaced by
    the output, its target untouched; a device such as /dev/null is written as named."""
    victim = tmp_path / "victim"
    victim.write_bytes(PRECIOUS)
    out = tmp_path / "out.jsonl"
    os.symlink(victim, out)
    args = [f"--dir={tmp_path}", "--size=1M", "--blocks=1M", "--threads=1", "--tests=seqwrite"]
    args += ["--seconds=0.02", "--reps=1"]
    for target in (out, Path(os.devnull)):
        p = subprocess.run(
            [str(bindir / "disk"), *args, f"--out={target}"], capture_output=True, timeout=60
        )
        assert p.returncode == 0, p.stderr
    assert victim.read_bytes() == PRECIOUS
    assert not out.is_symlink() and b'"type":"meta"' in out.read_bytes()
    assert Path(os.devnull).is_char_device()
