"""The network test between two nodes: our net program's server on one node and its client
on another, in one job step of two tasks (SLURM: srun -N2 -n2, task 0 serves, task 1
measures; the lab: node 1's and node 2's namespaces, started by launch/lab.py from the
job's `net2` tag, since the lab runs no SLURM).

The wrapper script below finds the server's address from SLURM (the first node of the
allocation, its NodeAddr resolved to IPv4), picks a port from the job id, and reads on the
client the device that routes to the server and its stated speed (/sys/class/net/DEV/speed,
only for devices with a hardware device behind them: loopback, veth and bridges state no
speed, or a made-up one, and are recorded as "no stated speed", -1). The samples carry
server_node, client_node, link_dev and link_mbit, so the store shows that the two sides
ran on different nodes and the node table takes the peak from the NIC's speed.

Restrictions: IPv4 only (net.c); the port is 20000 + job id mod 20000, so two such steps
on one node at the same time could collide (the server then fails naming the port).
"""

from __future__ import annotations

import shlex

from hpcscope.plan.job import Job

SCRIPT = r"""
nodes=$(scontrol show hostnames "${SLURM_JOB_NODELIST:?not inside a SLURM allocation}") || exit 2
server=$(echo "$nodes" | sed -n 1p)
addr=$(scontrol show node "$server" | tr ' ' '\n' | sed -n 's/^NodeAddr=//p')
ip=$(getent ahostsv4 "${addr:-$server}" | awk 'NR==1{print $1}')
if [ -z "$ip" ]; then echo "net: cannot resolve node $server (NodeAddr ${addr:-none}) to IPv4" >&2; exit 2; fi
port=$((20000 + ${SLURM_JOB_ID:-$$} % 20000))
if [ "${SLURM_PROCID:-0}" = 0 ]; then
  exec "$bin" --role=server --host="$ip" --port="$port" >/dev/null
fi
dev=$(ip route get "$ip" 2>/dev/null | tr ' ' '\n' | sed -n '/^dev$/{n;p;q}')
mbit=-1
if [ -n "$dev" ] && [ -e "/sys/class/net/$dev/device" ]; then
  mbit=$(cat "/sys/class/net/$dev/speed" 2>/dev/null || echo -1)
fi
exec "$bin" --role=client --host="$ip" --port="$port" --connect-wait=20 --stop-server \
  --server-node="$server" --client-node="${SLURMD_NODENAME:-$(hostname -s)}" \
  --link-dev="${dev:-unknown}" --link-mbit="${mbit:--1}" "$@"
"""


def slurm_job(binary: str, net_args: list[str], tags: dict) -> Job:
    """One job of two tasks on two nodes; its stdout is the client's records only."""
    script = f"bin={shlex.quote(binary)}\n" + SCRIPT
    return Job(
        suite="node",
        name="node/net/two-nodes",
        program=["sh", "-c", script, "hpcscope-net2", *net_args],
        ranks=2,
        nodes=2,
        tags={
            **tags,
            "part": "net",
            "placement": "node",
            "nodes": 2,
            "net2": {"binary": binary, "args": list(net_args)},
        },
        timeout_s=300,
    )
