#!/usr/bin/env python3
"""scripts/bench/signin_flood.py: the sign-in floods of scripts/bench-signin-flood.sh.

Usage: signin_flood.py PORT HOST ORIGIN RATE CLIENTS SECONDS FIRST MODE ADDRESSES

CLIENTS threads post a wrong password to the console's POST /sign-in on 127.0.0.1:PORT (Host
HOST, Origin ORIGIN), RATE requests a second in all, for SECONDS or until SIGTERM. MODE says for
which email:
  emails   an email nobody has, a new one each time (flood<n>@flood.example, from the FIRST-th):
           each costs the server no hash, and no email's budget fills;
  people   the emails of the 50 real people flood-person-0@bench.example to -49 (a real check,
           each email's budget full).
Each request comes on a connection of its own, from one of ADDRESSES loopback source addresses
(127.1.0.1 onward, 254 to a /24 block), taken in turn. Prints one line: the answers by status
(`200=… 303=… 422=… 429=… 503=… error=…`; 200: the page asked for a proof of work, 422: checked,
429: a limit or budget full), and the requests sent, for the next run's FIRST.
"""

import signal
import socket
import sys
import threading
import time
from collections import Counter

PEOPLE = 50


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


def email(mode, n):
    if mode == "people":
        return f"flood-person-{n % PEOPLE}%40bench.example"
    return f"flood{n}%40flood.example"


def main():
    port, host, origin = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    rate, clients, seconds, first = float(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])
    mode, addresses = sys.argv[8], int(sys.argv[9])
    if mode not in ("emails", "people"):
        sys.exit(f"MODE: emails or people, not {mode!r}")
    counts = Counter()
    lock = threading.Lock()
    sent = [first]
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    start = time.monotonic()
    end = start + seconds

    def client(index):
        slot = start + index / rate
        while slot < end and not stop.is_set():
            stop.wait(max(0.0, slot - time.monotonic()))
            if stop.is_set():
                break
            with lock:
                n = sent[0]
                sent[0] += 1
            body = f"email={email(mode, n)}&password=not+the+password".encode()
            request = (
                f"POST /sign-in HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\n"
                f"Content-Type: application/x-www-form-urlencoded\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            ).encode() + body
            try:
                status = sign_in(port, request, address(n % addresses))
            except (OSError, IndexError):
                status = "error"
            with lock:
                counts[status] += 1
            # A client late by its answers' time does not catch up in a burst.
            slot = max(slot + clients / rate, time.monotonic())

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    # The main thread stays free to take SIGTERM.
    while any(thread.is_alive() for thread in threads):
        time.sleep(0.2)
    summary = " ".join(f"{status}={n}" for status, n in sorted(counts.items()))
    print(f"{summary} sent={sent[0] - first}")


if __name__ == "__main__":
    main()
