#!/usr/bin/env python3
"""scripts/bench/signin_flood.py: the sign-in flood of scripts/bench-signin-flood.sh.

Usage: signin_flood.py PORT HOST ORIGIN RATE CLIENTS SECONDS FIRST

CLIENTS threads post a wrong password for an email nobody has (a new one each time, so the
per-email limit never refuses it and each one costs the server a check against its dummy hash)
to the console's POST /sign-in on 127.0.0.1:PORT (Host HOST, Origin ORIGIN), RATE requests a
second in all, for SECONDS. Each request comes on a connection of its own from a loopback
source address of its own (127.a.b.c, the FIRST-th onward; a request uses one address, so no
address comes near its limit of failures). Prints one line: the answers by status
(`422=… 429=… 503=… error=…`), and the addresses used, for the next run's FIRST.
"""

import socket
import sys
import threading
import time
from collections import Counter


def address(n):
    """The n-th source address: 127.1.0.1, 127.1.0.2, ... (host part 1 to 254)."""
    return f"127.{1 + n // (254 * 256) % 254}.{n // 254 % 256}.{n % 254 + 1}"


def sign_in(port, request, source):
    with socket.create_connection(("127.0.0.1", port), timeout=15, source_address=(source, 0)) as conn:
        conn.sendall(request)
        answer = b""
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer.split(b" ", 2)[1].decode()


def main():
    port, host, origin = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    rate, clients, seconds, first = float(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])
    counts = Counter()
    lock = threading.Lock()
    sent = [first]
    start = time.monotonic()
    end = start + seconds

    def client(index):
        slot = start + index / rate
        while slot < end:
            time.sleep(max(0.0, slot - time.monotonic()))
            with lock:
                n = sent[0]
                sent[0] += 1
            body = f"email=flood{n}%40flood.example&password=not+the+password".encode()
            request = (
                f"POST /sign-in HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\n"
                f"Content-Type: application/x-www-form-urlencoded\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            ).encode() + body
            try:
                status = sign_in(port, request, address(n))
            except (OSError, IndexError):
                status = "error"
            with lock:
                counts[status] += 1
            # A client late by its answers' time does not catch up in a burst.
            slot = max(slot + clients / rate, time.monotonic())

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    summary = " ".join(f"{status}={n}" for status, n in sorted(counts.items()))
    print(f"{summary} addresses={sent[0] - first}")


if __name__ == "__main__":
    main()
