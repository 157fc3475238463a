#!/usr/bin/env python3
"""Idle connections against a server, and how long another client then waits.

usage: idle_connections.py HOST:PORT PID COUNT SPREAD [--after-a-request]
  opens COUNT connections that send nothing (or, with --after-a-request, that make one
  keep-alive GET /health first), from SPREAD loopback addresses (127.0.0.1 alone
  when SPREAD is 1, else 127.1.x.y), in child processes of at most HOLD_PER_PROCESS each (a
  process's descriptors are limited); waits past the server's idle delays; then times a
  GET /health from 127.0.0.2 on a new connection, and prints: connections the server kept
  open, its resident memory before and after (from /proc/PID/status), that client's wait.
Bounded: COUNT at most 50 000; every socket times out; nothing outside loopback.
"""

import math
import resource
import socket
import subprocess
import sys
import time

HOLD_PER_PROCESS = 9000
SETTLE_SECONDS = 3  # past the server's one-second delay before idle connections shrink


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def source(i, spread):
    if spread == 1:
        return "127.0.0.1"
    n = i % spread
    return f"127.1.{n // 250}.{1 + n % 250}"


def still_open(sock):
    """True when the server has not closed the connection (a read would block)."""
    sock.setblocking(False)
    try:
        return sock.recv(1) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def ask_once(sock):
    """One keep-alive GET /health, its answer read whole (it has a Content-Length)."""
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    answer = b""
    while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < 15:
        chunk = sock.recv(4096)
        if not chunk:
            break
        answer += chunk


def hold(host, port, first, count, spread, ask):
    """Child: opens connections `first`..`first+count`, reports how many the server kept once
    settled, then holds them until its standard input closes."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    sockets, refused = [], 0
    for i in range(first, first + count):
        sock = socket.socket()
        sock.settimeout(5)
        try:
            sock.bind((source(i, spread), 0))
            sock.connect((host, port))
            if ask:
                ask_once(sock)
            sockets.append(sock)
        except OSError:
            refused += 1
            sock.close()
    print(f"opened {len(sockets)} {refused}", flush=True)
    sys.stdin.readline()  # the parent says when the server has settled
    print(f"kept {sum(1 for s in sockets if still_open(s))}", flush=True)
    sys.stdin.read()


def health_time(host, port):
    started = time.monotonic()
    sock = socket.create_connection((host, port), timeout=10, source_address=("127.0.0.2", 0))
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    answer = b""
    while True:
        chunk = sock.recv(4096)
        if not chunk:
            break
        answer += chunk
    sock.close()
    return time.monotonic() - started, answer.split(b"\r\n", 1)[0].decode()


def main():
    if sys.argv[1] == "--hold":
        host, port, first, count, spread = sys.argv[2], *map(int, sys.argv[3:7])
        return hold(host, port, first, count, spread, sys.argv[7] == "ask")
    target, pid, count, spread = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    assert 0 < count <= 50_000 and 0 < spread <= 50_000
    host, port = target.rsplit(":", 1)
    before = rss_kib(pid)
    children = []
    for k in range(math.ceil(count / HOLD_PER_PROCESS)):
        first = k * HOLD_PER_PROCESS
        share = min(HOLD_PER_PROCESS, count - first)
        children.append(subprocess.Popen(
            [sys.executable, __file__, "--hold", host, port, str(first), str(share), str(spread),
             "ask" if "--after-a-request" in sys.argv else "silent"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
    opened = refused = 0
    for child in children:
        _, n, r = child.stdout.readline().split()
        opened, refused = opened + int(n), refused + int(r)
    time.sleep(SETTLE_SECONDS)
    kept = 0
    for child in children:
        child.stdin.write("settled\n")
        child.stdin.flush()
        kept += int(child.stdout.readline().split()[1])
    after = rss_kib(pid)
    took, status = health_time(host, port)
    for child in children:
        child.stdin.close()
        child.wait(timeout=30)
    print(f"connections opened {opened} (refused at connect {refused}), kept open by the server {kept}")
    print(f"server resident memory {before} KiB before, {after} KiB after: "
          f"{(after - before) / max(kept, 1):.2f} KiB per connection kept")
    print(f"another client (127.0.0.2): '{status}' in {took * 1000:.1f} ms")


if __name__ == "__main__":
    main()
