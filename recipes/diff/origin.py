"""The echo origin: records each request it reads (method, target, headers, body), per port.

    origin.py --dir DIR PORT...

Listens on 127.0.0.1:PORT for each PORT and appends one JSON line per request to
DIR/origin-PORT.jsonl: the connection's number, the method, target, version, headers and the
body (latin-1). It answers each request `200` with a short body naming it.

It reads leniently on purpose, as many origin servers do: a head ends at the first empty line
(CRLF or bare LF), lines end at LF, a `Transfer-Encoding` that mentions `chunked` wins over
`Content-Length`, a chunk size is the hex digits before `;` or whitespace. Whatever a proxy
passes on that such a reader could frame in another way then shows as a request the client
never sent (a `/hidden/` target) or a body cut elsewhere. Python 3 standard library only.
"""

import argparse
import itertools
import json
import re
import socket
import sys
import threading
from pathlib import Path

READ_TIMEOUT_S = 10
HEAD_LIMIT = 64 * 1024
counter = itertools.count(1)


class Closed(Exception):
    pass


class Reader:
    def __init__(self, conn):
        self.conn = conn
        self.buf = b""

    def fill(self):
        data = self.conn.recv(65536)
        if not data:
            raise Closed()
        self.buf += data

    def until(self, pattern):
        while True:
            found = pattern.search(self.buf)
            if found:
                taken, self.buf = self.buf[: found.end()], self.buf[found.end():]
                return taken
            if len(self.buf) > HEAD_LIMIT:
                raise Closed()
            self.fill()

    def exact(self, size):
        while len(self.buf) < size:
            self.fill()
        taken, self.buf = self.buf[:size], self.buf[size:]
        return taken


HEAD_END = re.compile(rb"\r?\n\r?\n")
LINE_END = re.compile(rb"\n")
CHUNK_SIZE = re.compile(rb"^\s*([0-9a-fA-F]+)")


def read_request(reader):
    # Empty lines before a request are skipped (RFC 9112 §2.2).
    while reader.buf[:1] in (b"\r", b"\n") and reader.buf:
        reader.buf = reader.buf[1:]
    head = reader.until(HEAD_END)
    lines = [line.rstrip(b"\r") for line in head.split(b"\n")]
    parts = lines[0].split(b" ")
    method, target = parts[0], parts[1] if len(parts) > 1 else b""
    version = parts[2] if len(parts) > 2 else b""
    headers = []
    for line in lines[1:]:
        if not line:
            continue
        name, _, value = line.partition(b":")
        headers.append((name.strip(), value.strip()))
    values = {n.lower(): v for n, v in headers}
    if b"chunked" in values.get(b"transfer-encoding", b"").lower():
        body = read_chunked(reader)
    else:
        digits = re.match(rb"\d+", values.get(b"content-length", b"0"))
        body = reader.exact(int(digits.group()) if digits else 0)
    return method, target, version, headers, body


def read_chunked(reader):
    body = b""
    while True:
        line = reader.until(LINE_END)
        found = CHUNK_SIZE.match(line)
        size = int(found.group(1), 16) if found else 0
        if size == 0:
            while reader.until(LINE_END).strip():
                pass
            return body
        body += reader.exact(size)
        reader.until(LINE_END)


def text(raw):
    return raw.decode("latin-1")


def serve_connection(conn, out, lock):
    number = next(counter)
    reader = Reader(conn)
    conn.settimeout(READ_TIMEOUT_S)
    try:
        while True:
            method, target, version, headers, body = read_request(reader)
            record = {"conn": number, "method": text(method), "target": text(target), "version": text(version),
                      "headers": [[text(n), text(v)] for n, v in headers], "body": text(body)}
            with lock:
                out.write(json.dumps(record) + "\n")
                out.flush()
            answer = f"{record['method']} {record['target']}\n".encode("latin-1", "replace")
            close = any(n.lower() == b"connection" and b"close" in v.lower() for n, v in headers)
            head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n" % len(answer)
            conn.sendall(head + (b"Connection: close\r\n" if close else b"") + b"\r\n"
                         + (b"" if method == b"HEAD" else answer))
            if close:
                return
    except (Closed, OSError, ValueError):
        return
    finally:
        conn.close()


def accept(listener, port, directory):
    lock = threading.Lock()
    with open(Path(directory) / f"origin-{port}.jsonl", "a", encoding="utf-8") as out:
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=serve_connection, args=(conn, out, lock), daemon=True).start()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True)
    parser.add_argument("ports", nargs="+", type=int)
    args = parser.parse_args()
    listeners = [(socket.create_server(("127.0.0.1", port), backlog=256), port) for port in args.ports]
    for listener, port in listeners:
        threading.Thread(target=accept, args=(listener, port, args.dir), daemon=True).start()
    print("ready", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    sys.exit(main())
