"""A real, throwaway Redis Cluster on loopback ports: 3 masters and one replica of the first.

Every node is `redis-server --cluster-enabled yes --appendonly yes` in its own directory, with
a small `cluster-node-timeout` so a killed master's replica is promoted within about two
seconds; `redis-cli --cluster create` assigns the slots and `--cluster add-node --cluster-slave`
attaches the replica.
"""

from __future__ import annotations

import random
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis

REDIS_SERVER = shutil.which("redis-server")
REDIS_CLI = shutil.which("redis-cli")
NODE_TIMEOUT_MS = 1_000


@dataclass
class Node:
    """One cluster node process."""

    port: int
    process: subprocess.Popen[bytes]

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5)

    def cluster_state(self) -> str:
        """`cluster_state` of CLUSTER INFO (`ok` or `fail`)."""
        client = self.client()
        try:
            return str(client.execute_command("CLUSTER INFO").get("cluster_state"))
        finally:
            client.close()

    def replication(self) -> dict[str, object]:
        """INFO replication as a mapping."""
        client = self.client()
        try:
            return dict(client.info("replication"))
        finally:
            client.close()

    def kill(self) -> None:
        """SIGKILL: no shutdown, no last AOF fsync beyond what the policy already did."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()


@dataclass
class LocalCluster:
    """The nodes of a local cluster; `url` is the `redis+cluster://` URL of the workers."""

    directory: Path
    masters: list[Node] = field(default_factory=list)
    replicas: list[Node] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"redis+cluster://127.0.0.1:{self.masters[0].port}/0"

    @property
    def nodes(self) -> list[Node]:
        return self.masters + self.replicas

    def start(self, masters: int = 3, replicas: int = 1) -> LocalCluster:
        """Start the nodes, create the cluster, attach replicas to the first masters, wait for `ok`."""
        assert REDIS_CLI is not None
        self.masters, self.replicas = [], []
        for _ in range(masters):
            self.masters.append(self._node())
        for _ in range(replicas):
            self.replicas.append(self._node())
        for node in self.nodes:
            _wait_ping(node)
        subprocess.run([REDIS_CLI, "--cluster", "create", *(n.address for n in self.masters),
                        "--cluster-replicas", "0", "--cluster-yes"], check=True, timeout=30,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for replica, master in zip(self.replicas, self.masters, strict=False):
            subprocess.run([REDIS_CLI, "--cluster", "add-node", replica.address, master.address, "--cluster-slave",
                            "--cluster-master-id", self.node_id(master)], check=True, timeout=30,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.wait_ok()
        for replica in self.replicas:
            _wait(lambda r=replica: r.replication().get("master_link_status") == "up", 20)
        return self

    def _node(self) -> Node:
        assert REDIS_SERVER is not None
        # Nodes already chosen may not be listening yet: never hand out their ports (or bus ports) again.
        port = _free_pair(taken={p for n in self.nodes for p in (n.port, n.port + 10_000)})
        directory = self.directory / str(port)
        directory.mkdir(parents=True)
        process = subprocess.Popen(
            [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
             "--cluster-config-file", f"nodes-{port}.conf", "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
             "--appendonly", "yes", "--save", "", "--dir", str(directory)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return Node(port, process)

    def node_id(self, node: Node) -> str:
        client = node.client()
        try:
            return str(client.execute_command("CLUSTER MYID").decode())
        finally:
            client.close()

    def wait_ok(self, timeout: float = 20.0) -> None:
        """Until every live node reports `cluster_state:ok` and agrees on the masters."""
        def ok() -> bool:
            live = [n for n in self.nodes if n.process.poll() is None]
            return all(n.cluster_state() == "ok" for n in live)
        _wait(ok, timeout)

    def wait_promoted(self, replica: Node, timeout: float = 20.0) -> None:
        """Until `replica` is a master and the cluster is `ok` again."""
        _wait(lambda: self.master_of(replica) is None, timeout)
        self.wait_ok(timeout)

    def master_of(self, replica: Node) -> Node | None:
        """The master a replica follows (None when it is a master itself)."""
        info = replica.replication()
        if info.get("role") == "master":
            return None
        return next(n for n in self.nodes if n.port == info.get("master_port"))

    def stop(self) -> None:
        for node in self.nodes:
            node.kill()


def _free_pair(taken: set[int]) -> int:
    """A free loopback port P whose cluster bus port P + 10000 is free too, neither of them in `taken`."""
    for _ in range(200):
        port = random.randrange(20_000, 40_000)
        if port in taken or port + 10_000 in taken:
            continue
        try:
            with socket.socket() as first, socket.socket() as bus:
                first.bind(("127.0.0.1", port))
                bus.bind(("127.0.0.1", port + 10_000))
            return port
        except OSError:
            continue
    raise RuntimeError("no free pair of loopback ports")


def _wait_ping(node: Node) -> None:
    def answers() -> bool:
        try:
            return bool(node.client().ping())
        except redis.ConnectionError:
            return False
    _wait(answers, 10)


def _wait(predicate: object, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if predicate():  # type: ignore[operator]
                return
        except redis.RedisError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError("the local cluster did not reach the expected state in time")
        time.sleep(0.05)
