"""A private, throwaway `redis-server` on a free loopback port (tests and benchmarks).

Nothing is persisted (`--save ''`, no AOF) unless the caller's options say otherwise (a fault
test runs one on its AOF and starts it again on the same port and folder after a SIGKILL).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

from .connection import TRANSIENT_ERRORS, connect

REDIS_BINARY = shutil.which("redis-server")


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_redis_server(directory: str, *options: str, port: int = 0) -> tuple[subprocess.Popen[bytes], int]:
    """Start redis-server on a free loopback port (or `port`) in `directory`, with extra `options`
    (e.g. "--appendonly", "yes"); wait until it answers PING (an AOF is loaded by then)."""
    if REDIS_BINARY is None:
        raise RuntimeError("redis-server is not installed (apt-get install -y redis-server)")
    port = port or free_port()
    process = subprocess.Popen(
        [REDIS_BINARY, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--daemonize", "no", "--dir", directory, *options],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    client = connect(f"redis://127.0.0.1:{port}/0")
    try:
        for _ in range(600):  # 30 s: loading a large AOF takes a while
            try:
                if client.ping():
                    return process, port
            except TRANSIENT_ERRORS:
                time.sleep(0.05)
    finally:
        client.close()
    process.kill()
    raise RuntimeError("redis-server did not answer PING")


def start_redis_socket(directory: str, *options: str) -> tuple[subprocess.Popen[bytes], str]:
    """`start_redis_server` listening on a Unix socket in `directory` too; its `unix://` URL."""
    path = os.path.join(directory, "redis.sock")
    process, _ = start_redis_server(directory, "--unixsocket", path, "--unixsocketperm", "700", *options)
    return process, f"unix://{path}?db=0"
