"""What lies under a disk run's directory: the block device, its kind, the file system and
its mount options, and the machine's RAM, recorded with every node run that measures the
disk (a Note "info" with data {"disk_facts": ...}, suites/node.py).

Why: O_DIRECT skips the guest's page cache only. On a KVM guest's virtio disk the host's
write-back cache took the writes (6.4 GB/s write against 1.6 GB/s read on a 256 MiB
file), and nothing said the rate was a cache's. These facts let every view say so
(analysis/node_table.py disk_cache).

Sources, all read-only and cheap (a few small files): /proc/self/mountinfo (the mount
holding the directory: longest mount point that is a prefix of its real path), the
device's /sys/class/block/<dev> (a partition's parent disk for queue/ and device/),
/proc/meminfo's MemTotal. The kind comes from the driver's name where sysfs has it
(device/driver -> virtio_blk, nvme, sd) else from the device's name (vd*, nvme*, sd*).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

SYS_BLOCK = Path("/sys/class/block")

KINDS = (("vd", "virtio"), ("xvd", "xen"), ("nvme", "NVMe"), ("sd", "SCSI/SATA"), ("hd", "IDE"))
DRIVERS = {"virtio_blk": "virtio", "virtio_scsi": "virtio-scsi", "nvme": "NVMe", "sd": "SCSI/SATA"}
VIRTUAL_KINDS = {"virtio", "virtio-scsi", "xen"}


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal (\\040)."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def mount_of(path: str, mountinfo: str) -> dict | None:
    """{mount_point, fstype, source, options} of the mount holding `path` (a real path),
    from /proc/self/mountinfo's text; None when no line parses."""
    best: dict | None = None
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        f, r = left.split(), right.split()
        if not sep or len(f) < 6 or len(r) < 2:
            continue
        point = _unescape(f[4])
        inside = path == point or path.startswith(point.rstrip("/") + "/") or point == "/"
        if inside and (best is None or len(point) >= len(best["mount_point"])):
            options = f[5] + ("," + r[2] if len(r) > 2 else "")
            best = {"mount_point": point, "fstype": r[0], "source": _unescape(r[1]),
                    "options": options}  # fmt: skip
    return best


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return None


def block_device(source: str, sys_block: Path = SYS_BLOCK) -> dict:
    """{device, disk, kind, rotational, model} of /dev/<name>; unknown parts None."""
    name = os.path.basename(source) if source.startswith("/dev/") else None
    out: dict = {"device": name, "disk": None, "kind": None, "rotational": None, "model": None}
    if not name or not (sys_block / name).exists():
        return out
    node = (sys_block / name).resolve()
    disk = node.parent if (node / "partition").exists() else node  # a partition's disk
    out["disk"] = disk.name
    driver = (disk / "device" / "driver").resolve().name if (disk / "device").exists() else ""
    out["kind"] = DRIVERS.get(driver)
    if out["kind"] is None:
        out["kind"] = next((k for p, k in KINDS if disk.name.startswith(p)), None)
    rot = _read(disk / "queue" / "rotational")
    out["rotational"] = None if rot not in ("0", "1") else rot == "1"
    out["model"] = _read(disk / "device" / "model") or None
    return out


def mem_total(meminfo: str) -> int | None:
    for line in meminfo.splitlines():
        if line.startswith("MemTotal:"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) * 1024
    return None


def facts(directory: str | None) -> dict:
    """The facts of the directory a disk run writes into (default /var/tmp, as the disk
    program's): every field present, None where it could not be read."""
    where = os.path.realpath(directory or "/var/tmp")
    info = _read(Path("/proc/self/mountinfo")) or ""
    mount = mount_of(where, info) or {}
    dev = block_device(mount.get("source", ""))
    try:
        free = shutil.disk_usage(where).free
    except OSError:
        free = None
    return {
        "directory": where,
        "mount_point": mount.get("mount_point"),
        "fstype": mount.get("fstype"),
        "mount_options": mount.get("options"),
        **dev,
        "virtual": dev["kind"] in VIRTUAL_KINDS if dev["kind"] else None,
        "mem_total": mem_total(_read(Path("/proc/meminfo")) or ""),
        "free_bytes": free,
    }


def text(f: dict) -> str:
    """'/var/tmp on /dev/vda (virtio, not rotational, model -), ext4 rw,relatime; RAM 23 GiB'."""
    from hpcscope.formatting import format_bytes

    rot = {True: "rotational", False: "not rotational", None: "rotational unknown"}
    dev = f.get("device") or "unknown device"
    what = f"{f.get('kind') or 'kind unknown'}, {rot[f.get('rotational')]}"
    what += f", model {f['model']}" if f.get("model") else ", no model reported"
    ram = format_bytes(f["mem_total"]) if f.get("mem_total") else "unknown"
    return (
        f"{f.get('directory')} on /dev/{dev} ({what}), {f.get('fstype') or 'file system unknown'} "
        f"{f.get('mount_options') or ''}; RAM {ram}"
    )
