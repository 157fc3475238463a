#!/usr/bin/env python3
"""The shared edge cases: an origin stub, a card stub, and the checker every edge runs.

    harness.py stubs --origin-port P1 --card-port P2 --markup none|esi|ssi --budget-ms N
    harness.py check --edge URL --origin URL --card URL --runtime NAME [--case NAME ...] [--report FILE]

The cases are data (cases.json and pages/); README.md describes them, and docs/edge.md the
edge client rules they check. Python 3 standard library only.
"""

import argparse
import gzip
import hashlib
import http
import json
import re
import signal
import socket
import socketserver
import sys
import threading
import time
import zlib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

HERE = Path(__file__).resolve().parent
CASES_FILE = HERE / "cases.json"
PAGES_DIR = HERE / "pages"
MARKERS_FILE = HERE.parent.parent / "data" / "agent-markers-v0.1.txt"

INCLUDE = "{{include}}"
FILLER = "{{filler}}"
MARKUP = {
    "none": "",
    # No space after `<!--esi`: Varnish keeps whatever the comment holds besides the
    # include, so `<!--esi <esi:include …/>-->` would leave a space before the card.
    "esi": '<!--esi<esi:include src="/agentcard-card"/>-->',
    "ssi": '<!--# include virtual="/agentcard-card" -->',
}
# The first real article start tag, right after {{include}} in a page.
ARTICLE_START_TAG = re.compile(r"<article(?:\s[^>]*)?/?>", re.IGNORECASE)
CAUSES = {None, "no_fill", "card_error", "timeout", "unreachable", "not_html", "no_article"}
AGENT_CACHE_CONTROL = "public, max-age=0, must-revalidate"
# Headers a gated agent's composed or unchanged page may lose or change.
AGENT_REWRITTEN = {"cache-control", "etag", "last-modified", "content-encoding", "vary"}
CLIENT_TIMEOUT_S = 30
WORKERS = 8


# ---------------------------------------------------------------- runtimes


@dataclass(frozen=True)
class Runtime:
    markup: str  # what the origin stub writes at {{include}} for this runtime
    brand_line: bool  # writes <p class="agentcard-brand-line"> into the article
    owned: frozenset  # header names (lowercase) the runtime owns: left out of byte identity
    keeps_case: bool  # header names keep the case the origin sent
    keeps_order: bool  # headers keep the order the origin sent
    card_user_agent: str  # pattern the card call's User-Agent must match in full


FRAMING = ("connection", "keep-alive", "transfer-encoding", "content-length",
           "proxy-connection", "te", "trailer", "upgrade")


def owned(*extra):
    return frozenset(FRAMING + extra)


# The one table of what each runtime owns and can do. A recipe adjusts its own row.
RUNTIMES = {
    "agentcard-edge": Runtime("none", True, owned("date"), True, True, r"agentcard-edge/\S+"),
    "cloudflare": Runtime("none", True, owned("date"), False, False, r"agentcard-worker/\S+"),
    "varnish": Runtime("esi", False, owned("date", "via", "age", "x-varnish", "accept-ranges"),
                       True, True, r".+"),
    "nginx": Runtime("ssi", False, owned("date", "server"), True, False, r".+"),
    # agentcard edge behind nginx (recipes/front/): nginx's own Date and Server, the edge's card.
    "nginx-front": Runtime("none", True, owned("date", "server"), True, False, r"agentcard-edge/\S+"),
    # agentcard edge behind HAProxy (recipes/front-haproxy/): header names lowercased.
    "haproxy-front": Runtime("none", True, owned("date"), False, True, r"agentcard-edge/\S+"),
}


# ---------------------------------------------------------------- markers


def read_markers():
    """The markers of data/agent-markers-v0.1.txt, read at run time."""
    markers = []
    for line in MARKERS_FILE.read_text("utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#") and not line.startswith("version:"):
            markers.append(line.split()[1])
    return markers


def marker_regex(markers):
    """Any marker, case-insensitive (ASCII), on word boundaries (letters, digits, `_`)."""
    words = "|".join(re.escape(marker) for marker in markers)
    return re.compile(rf"(?<![A-Za-z0-9_])(?:{words})(?![A-Za-z0-9_])", re.IGNORECASE | re.ASCII)


# ---------------------------------------------------------------- the cases


def site_host(host_header):
    """The request's host, lowercased, port dropped."""
    return re.sub(r":\d*$", "", host_header).lower()


def merged_headers(defaults, extra):
    """`defaults` with each header of `extra` replacing the one of the same name, or appended."""
    result = [list(pair) for pair in defaults]
    for name, value in extra:
        same = [pair for pair in result if pair[0].lower() == name.lower()]
        if same:
            same[0][1] = value
        else:
            result.append([name, value])
    return result


class Suite:
    """cases.json with its defaults applied, marker cases generated, pages and cards resolved."""

    def __init__(self):
        data = json.loads(CASES_FILE.read_text("utf-8"))
        self.site = data["site"]
        markers = read_markers()
        self.gate = marker_regex(markers)
        self.pages = {name: {**data["page_defaults"], **page} for name, page in data["pages"].items()}
        self.cards = {name: {**data["card_defaults"], **card} for name, card in data["cards"].items()}
        self.cases = {}
        for raw in data["cases"] + marker_cases(data["marker_cases"], markers):
            self.add_case({**data["case_defaults"], **raw}, data)
        self.texts = {name: self.load_text(name) for name in self.pages}
        self.bodies = {}
        self.bodies_lock = threading.Lock()

    def add_case(self, case, data):
        name = case["name"]
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name) or name in self.cases:
            raise ValueError(f"case {name!r}: a name must be unique, lowercase, digits and '-'")
        for key, table in (("page", self.pages), ("card", self.cards)):
            if case[key] not in table:
                raise ValueError(f"case {name}: unknown {key} {case[key]!r}")
        ua = case.get("user_agent") or data["user_agents"][case["ua"]]
        headers = merged_headers([["User-Agent", ua]] + data["request_headers"], case["headers"])
        case.update(target=case["target"].format(name=name), headers=headers,
                    body=case["body"].encode("utf-8"), user_agent=ua)
        self.cases[name] = case
        if case["expect"] and not self.is_gated(case):
            raise ValueError(f"case {name}: `expect` is for gated agents only")

    def load_text(self, page_name):
        page = self.pages[page_name]
        text = (PAGES_DIR / page["file"]).read_text("utf-8")
        text = text.replace(FILLER, filler(page["filler_bytes"]))
        if INCLUDE in text:
            after = text.split(INCLUDE)
            if len(after) != 2 or not ARTICLE_START_TAG.match(after[1]):
                raise ValueError(f"page {page_name}: {INCLUDE} must appear once, right before <article")
        return text

    def is_gated(self, case):
        return (case["method"] in ("GET", "HEAD") and site_host(case["host"]) == self.site["host"]
                and self.gate.search(case["user_agent"]) is not None)

    def case_of_path(self, path):
        """The case named by a path's first segment, or None."""
        return self.cases.get(path.lstrip("/").split("/")[0])

    def page_body(self, page_name, markup, gzipped):
        """The page's bytes as the origin sends them (cached: the 1 MB page is made once)."""
        key = (page_name, markup, gzipped)
        with self.bodies_lock:
            if key not in self.bodies:
                page = self.pages[page_name]
                body = self.texts[page_name].replace(INCLUDE, MARKUP[markup]).encode(page["encoding"])
                self.bodies[key] = gzip.compress(body, mtime=0) if gzipped else body
            return self.bodies[key]


def marker_cases(spec, markers):
    """One case per marker of the data file and User-Agent template (`{marker}`, `{lower}`)."""
    cases = []
    for marker in markers:
        for name, ua in spec["user_agents"].items():
            fields = {"marker": marker, "lower": marker.lower()}
            cases.append({"name": name.format(**fields), "page": spec["page"],
                          "user_agent": ua.format(**fields)})
    return cases


def filler(size):
    """Deterministic paragraphs, at least `size` bytes of UTF-8."""
    lines, total, number = [], 0, 0
    while total < size:
        line = f"<p>Archive n° {number:06d} : texte de remplissage déterministe, toujours le même.</p>\n"
        lines.append(line)
        total += len(line.encode("utf-8"))
        number += 1
    return "".join(lines)


def expectation(suite, case, runtime_name):
    """What the case expects from a runtime: outcome, cause, card_calls (and maybe skip)."""
    if suite.is_gated(case) and case["method"] == "HEAD":  # rule 6's headers, no card call
        expect = {"outcome": "unchanged", "cause": None, "card_calls": 0}
    elif suite.is_gated(case):
        expect = {"outcome": "composed", "cause": None, "card_calls": 1, **case["expect"]}
    else:
        expect = {"outcome": "unchanged", "cause": None, "card_calls": 0}
    for runtimes, override in case["overrides"].items():
        if runtime_name in runtimes.split(","):
            expect.update(override)
    if expect["cause"] not in CAUSES:
        raise ValueError(f"case {case['name']}: unknown cause {expect['cause']!r}")
    composable = INCLUDE in suite.texts[case["page"]] and suite.cards[case["card"]]["kind"] == "card"
    if expect["outcome"] == "composed" and not composable:
        raise ValueError(f"case {case['name']}: composed needs a page with {INCLUDE} and a card")
    return expect


# ---------------------------------------------------------------- card and page text


def escape_html(text):
    """As agentcard escapes a card's texts."""
    for raw, escaped in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&#39;")):
        text = text.replace(raw, escaped)
    return text


def escape_once(text):
    """The brand line's escaping: `&`, `<`, `>` and `"`."""
    for raw, escaped in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;")):
        text = text.replace(raw, escaped)
    return text


def card_html(card):
    """The card as agentcard serves it: one <aside>."""
    e = {key: escape_html(value) for key, value in card.items() if isinstance(value, str)}
    return (f'<aside class="agentcard" data-card-id="{e["id"]}" data-brand="{e["brand"]}" '
            f'lang="{e["lang"]}"><p class="agentcard-brand">{e["brand"]}</p>'
            f'<p class="agentcard-title">{e["title"]}</p><p class="agentcard-body">{e["body"]}</p>'
            f'<p class="agentcard-link"><a href="{e["link_url"]}" rel="noopener">{e["link_label"]}'
            f"</a></p></aside>")


def brand_line(card):
    return f'<p class="agentcard-brand-line">{escape_once(card["brand"])}</p>'


def char_refs(text):
    """Non-ASCII characters as decimal character references."""
    return "".join(c if ord(c) < 128 else f"&#{ord(c)};" for c in text)


def charset_of(content_type):
    found = re.search(r";\s*charset\s*=\s*\"?([A-Za-z0-9_.:-]+)", content_type or "", re.IGNORECASE)
    return found.group(1).lower() if found else None


def is_html_200(page):
    return page["status"] == 200 and (page["content_type"] or "").lower().startswith("text/html")


def expected_bodies(suite, case, expect, runtime):
    """The acceptable bodies of a gated agent's 200 text/html answer."""
    if case["method"] == "HEAD":
        return [b""]
    page = suite.pages[case["page"]]
    text = suite.texts[case["page"]]
    if expect["outcome"] == "composed":
        card = suite.cards[case["card"]]
        inserted, brand = card_html(card), brand_line(card) if runtime.brand_line else ""
        if charset_of(page["content_type"]) not in ("utf-8", "utf8"):
            inserted, brand = char_refs(inserted), char_refs(brand)
        before, after = text.split(INCLUDE)
        tag_end = ARTICLE_START_TAG.match(after).end()
        texts = [before + inserted + after[:tag_end] + brand + after[tag_end:]]
    else:  # unchanged: as the origin sent it, or with its include resolved to nothing
        texts = [text.replace(INCLUDE, MARKUP[runtime.markup]), text.replace(INCLUDE, "")]
    return [t.encode(page["encoding"]) for t in dict.fromkeys(texts)]


# ---------------------------------------------------------------- stubs


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    allow_reuse_address = True
    daemon_threads = True
    request_queue_size = 128

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (ConnectionError, socket.timeout)):
            super().handle_error(request, client_address)


def serve(port, respond):
    """A threaded HTTP/1.1 server on 127.0.0.1 whose every request goes to `respond(handler)`."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            respond(self)

        do_HEAD = do_POST = do_GET

        def log_message(self, *args):
            pass

    server = Server(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()


def request_body(handler):
    """The request's body, Content-Length or chunked."""
    if "chunked" in handler.headers.get("Transfer-Encoding", "").lower():
        return read_chunked(handler.rfile)
    return handler.rfile.read(int(handler.headers.get("Content-Length") or 0))


def status_line(status):
    return f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}"


def head_bytes(lines):
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def reply(handler, status, content_type, body, extra=()):
    """A simple Content-Length answer (card stub, control, unknown paths)."""
    lines = [status_line(status)] + [f"{n}: {v}" for n, v in extra]
    if content_type:
        lines.append(f"Content-Type: {content_type}")
    lines.append(f"Content-Length: {len(body)}")
    handler.wfile.write(head_bytes(lines) + (body if handler.command != "HEAD" else b""))


def accepts_gzip(accept_encoding):
    for item in accept_encoding.lower().split(","):
        coding, _, params = item.strip().partition(";")
        if coding.strip() in ("gzip", "x-gzip", "*"):
            return not re.fullmatch(r"\s*q\s*=\s*0(\.0*)?\s*", params)
    return False


def chunked(body, sizes):
    """`body` cut in chunks of the given sizes, repeated in turn, then the last chunk."""
    out, start, turn = [], 0, 0
    while start < len(body):
        piece = body[start:start + sizes[turn % len(sizes)]]
        out.append(b"%x\r\n%s\r\n" % (len(piece), piece))
        start, turn = start + len(piece), turn + 1
    return b"".join(out) + b"0\r\n\r\n"


def origin_respond(suite, markup, handler):
    """The origin stub: the page of the case named by the path's first segment."""
    received = request_body(handler)
    case = suite.case_of_path(urlsplit(handler.path).path)
    if case is None:
        return reply(handler, 404, "text/plain", b"no such case\n")
    page = suite.pages[case["page"]]
    gzipped = page["gzip"] == "always" or (
        page["gzip"] == "when-accepted" and accepts_gzip(handler.headers.get("Accept-Encoding", "")))
    body = suite.page_body(case["page"], markup, gzipped)
    lines = [status_line(page["status"])]
    if page["content_type"]:
        lines.append(f"Content-Type: {page['content_type']}")
    lines += [f"{n}: {v}" for n, v in page["headers"] + page["add_headers"]]
    if page["echo"]:
        lines += [f"X-Echo-Target: {handler.path}",
                  f"X-Echo-Body-Sha256: {hashlib.sha256(received).hexdigest()}"]
    if gzipped:
        lines.append("Content-Encoding: gzip")
    handler.wfile.write(framed(page, lines, body, handler.command != "HEAD"))
    if page["framing"] == "close":
        handler.close_connection = True


def framed(page, lines, body, with_body):
    """The answer's bytes with the page's framing: content-length, chunked or close."""
    if page["framing"] == "content-length":
        lines.append(f"Content-Length: {len(body)}")
    elif page["framing"] == "chunked":
        lines.append("Transfer-Encoding: chunked")
        body = chunked(body, page["chunks"])
    else:
        lines.append("Connection: close")
    return head_bytes(lines) + (body if with_body else b"")


class CardStub:
    """Stands in for `agentcard serve`'s GET /fragment; records every call by case."""

    def __init__(self, suite, budget_ms):
        self.suite, self.budget_ms = suite, budget_ms
        self.calls, self.lock = {}, threading.Lock()

    def respond(self, handler):
        url = urlsplit(handler.path)
        if handler.command == "POST" and url.path == "/_reset":
            with self.lock:
                self.calls.clear()
            return reply(handler, 204, None, b"")
        if url.path.startswith("/_calls/"):
            with self.lock:
                calls = self.calls.get(url.path[len("/_calls/"):], [])
                return reply(handler, 200, "application/json", json.dumps(calls).encode())
        self.answer_card(handler, url)

    def answer_card(self, handler, url):
        query = parse_qsl(url.query, keep_blank_values=True)
        page_url = next((value for key, value in query if key == "page_url"), "")
        case = self.suite.case_of_path(urlsplit(page_url).path)
        self.record(case["name"] if case else "", handler, url, query)
        if url.path != "/fragment" or case is None:
            return reply(handler, 404, "text/plain", b"not a fragment call of a known case\n")
        if handler.headers.get("X-API-Key") != self.suite.site["key"]:
            return card_reply(handler, "unauthorized", None, 0)
        card = self.suite.cards[case["card"]]
        card_reply(handler, card["kind"], card, self.budget_ms)

    def record(self, name, handler, url, query):
        call = {"method": handler.command, "path": url.path, "query": query,
                "headers": list(handler.headers.items())}
        with self.lock:
            self.calls.setdefault(name, []).append(call)


CARD_CACHE = [("Cache-Control", "public, s-maxage=120, stale-while-revalidate=240")]
NO_STORE = [("Cache-Control", "no-store")]
INVALID_KEY = b'{"error":{"code":"invalid_key","message":"The API key is missing or invalid."}}'
ERROR_PAGE = (b"<!DOCTYPE html><html><body><h1>500 Internal Server Error</h1>"
              b"<p>AGENTCARD-STUB-ERROR-BODY: must never reach a page</p></body></html>")


def card_reply(handler, kind, card, budget_ms):
    """The card stub's answer of one kind (see cases.json "cards")."""
    if kind == "slow":
        time.sleep((budget_ms + 1000) / 1000)
    if kind in ("card", "slow"):
        reply(handler, 200, "text/html; charset=UTF-8", card_html(card).encode("utf-8"), CARD_CACHE)
    elif kind == "no_fill":
        reply(handler, 204, None, b"", CARD_CACHE)
    elif kind == "unauthorized":
        reply(handler, 401, "application/json", INVALID_KEY, NO_STORE)
    elif kind == "server_error":
        reply(handler, 500, "text/html; charset=utf-8", ERROR_PAGE, NO_STORE)
    elif kind == "json":
        body = json.dumps({"card": {k: card[k] for k in ("id", "lang", "brand", "title", "body")}})
        reply(handler, 200, "application/json", body.encode("utf-8"), CARD_CACHE)
    else:  # close: no answer at all
        handler.close_connection = True


def run_stubs(args):
    suite = Suite()
    serve(args.origin_port, lambda handler: origin_respond(suite, args.markup, handler))
    serve(args.card_port, CardStub(suite, args.budget_ms).respond)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: sys.exit(0))
    print("ready", flush=True)
    while True:
        signal.pause()


# ---------------------------------------------------------------- raw HTTP client


@dataclass
class Response:
    status: int
    headers: list  # [(name, value)] in order, names as sent
    body: bytes  # framing removed, content coding kept

    def values(self, name):
        return [value for key, value in self.headers if key.lower() == name.lower()]


def read_line(stream):
    line = stream.readline(65536)
    if not line.endswith(b"\n"):
        raise ValueError("connection closed in the middle of a response head")
    return line.rstrip(b"\r\n").decode("latin-1")


def read_exact(stream, size):
    data = stream.read(size)
    if len(data) != size:
        raise ValueError(f"connection closed after {len(data)} of {size} body bytes")
    return data


def read_chunked(stream):
    parts = []
    while size := int(read_line(stream).split(";")[0].strip(), 16):
        parts.append(read_exact(stream, size))
        read_exact(stream, 2)
    while read_line(stream):  # trailer fields, up to the blank line
        pass
    return b"".join(parts)


def read_head(stream):
    status = int(read_line(stream).split(" ")[1])
    headers = []
    while line := read_line(stream):
        name, _, value = line.partition(":")
        headers.append((name, value.strip()))
    return status, headers


def read_response(stream, method):
    status, headers = read_head(stream)
    while 100 <= status < 200:
        status, headers = read_head(stream)
    answer = Response(status, headers, b"")
    if method == "HEAD" or status in (204, 304):
        return answer
    if any("chunked" in value.lower() for value in answer.values("Transfer-Encoding")):
        answer.body = read_chunked(stream)
    elif answer.values("Content-Length"):
        answer.body = read_exact(stream, int(answer.values("Content-Length")[0]))
    else:
        answer.body = stream.read()
    return answer


def exchange(base_url, raw_request, method):
    """Sends raw request bytes to base_url's host and port; reads one answer as framed."""
    url = urlsplit(base_url)
    with socket.create_connection((url.hostname, url.port or 80), CLIENT_TIMEOUT_S) as sock:
        sock.sendall(raw_request)
        with sock.makefile("rb") as stream:
            return read_response(stream, method)


def request_bytes(case):
    lines = [f"{case['method']} {case['target']} HTTP/1.1", f"Host: {case['host']}"]
    lines += [f"{name}: {value}" for name, value in case["headers"]]
    if case["body"]:
        lines.append(f"Content-Length: {len(case['body'])}")
    return head_bytes(lines) + case["body"]


def control(card_url, method, path):
    answer = exchange(card_url, head_bytes([f"{method} {path} HTTP/1.1", "Host: card-stub",
                                            "Content-Length: 0"]), method)
    return json.loads(answer.body) if answer.body else None


# ---------------------------------------------------------------- checks


def first_difference(expected, got):
    at = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b), min(len(expected), len(got)))
    return (f"body differs at byte {at} (expected {len(expected)} bytes, got {len(got)}): "
            f"expected …{expected[max(0, at - 40):at + 60]!r}…, got …{got[max(0, at - 40):at + 60]!r}…")


def comparable_headers(headers, runtime):
    """The headers byte identity covers: not owned by the runtime; case and order as it keeps them."""
    kept = [(name if runtime.keeps_case else name.lower(), value)
            for name, value in headers if name.lower() not in runtime.owned]
    return kept if runtime.keeps_order else sorted(kept, key=lambda pair: pair[0].lower())


def identity_problems(answer, direct, runtime):
    """Byte identity: status, the headers the runtime does not own, body bytes."""
    if answer.status != direct.status:
        return [f"status {answer.status}, the origin's is {direct.status}"]
    got, want = comparable_headers(answer.headers, runtime), comparable_headers(direct.headers, runtime)
    problems = [header_difference(want, got)] if got != want else []
    if answer.body != direct.body:
        problems.append(first_difference(direct.body, answer.body))
    return problems


def header_difference(want, got):
    """Why two header lists differ: values, then name case, then order."""
    def lowered(headers):
        return Counter((name.lower(), value) for name, value in headers)
    missing, added = lowered(want) - lowered(got), lowered(got) - lowered(want)
    if missing or added:
        return f"headers differ from the origin's: missing {sorted(missing)}, added {sorted(added)}"
    if Counter(want) != Counter(got):
        return f"header name case differs from the origin's: {[name for name, _ in got]}"
    return f"header order differs from the origin's: {[name for name, _ in got]}"


def agent_header_problems(answer, direct, runtime):
    """Rule 6 on a gated agent's 200 text/html answer; the origin's other headers kept."""
    problems = [] if answer.status == 200 else [f"status {answer.status}, expected 200"]
    if answer.values("Cache-Control") != [AGENT_CACHE_CONTROL]:
        problems.append(f"Cache-Control {answer.values('Cache-Control')}, expected [{AGENT_CACHE_CONTROL!r}]")
    problems += [f"{name} still present" for name in ("ETag", "Last-Modified") if answer.values(name)]
    ignored = runtime.owned | AGENT_REWRITTEN
    want = Counter((n.lower(), v) for n, v in direct.headers if n.lower() not in ignored)
    missing = want - Counter((n.lower(), v) for n, v in answer.headers)
    if missing:
        problems.append(f"origin headers missing: {sorted(missing)}")
    return problems


def decoded(answer):
    coding = (answer.values("Content-Encoding") or ["identity"])[0].lower()
    if coding in ("gzip", "x-gzip"):
        return gzip.decompress(answer.body)
    if coding == "deflate":
        return zlib.decompress(answer.body)
    if coding == "identity":
        return answer.body
    raise ValueError(f"cannot check a body with Content-Encoding {coding}")


def body_problems(answer, bodies):
    got = decoded(answer)
    return [] if got in bodies else [first_difference(bodies[0], got)]


def call_problems(suite, case, calls, wanted, runtime):
    """The card calls: how many, and each one's method, path, parameters and headers."""
    low, high = wanted if isinstance(wanted, list) else (wanted, wanted)
    problems = [] if low <= len(calls) <= high else [f"{len(calls)} card calls, expected {wanted}"]
    for call in calls:
        problems += [f"card call: {problem}" for problem in one_call_problems(suite, case, call, runtime)]
    return list(dict.fromkeys(problems))


def one_call_problems(suite, case, call, runtime):
    site = suite.site
    query = {}
    for key, value in call["query"]:
        query.setdefault(key, value)
    headers = {}
    for name, value in call["headers"]:
        headers.setdefault(name.lower(), value)
    page_url = f"{site['scheme']}://{site_host(case['host'])}{re.split('[?#]', case['target'])[0]}"
    wanted = {"method": ("GET", call["method"]), "path": ("/fragment", call["path"]),
              "page_url": (page_url, query.get("page_url")),
              "X-API-Key": (site["key"], headers.get("x-api-key")),
              "X-Agent-UA": (case["user_agent"], headers.get("x-agent-ua"))}
    wanted.update({key: (site[key], query.get(key)) for key in ("partner_id", "fragment_id", "lang")})
    problems = [f"{key} {got!r}, expected {want!r}" for key, (want, got) in wanted.items() if got != want]
    problems += [f"{name} must not be sent" for name in ("api_key",) if name in query]
    problems += [f"{name} header must not be sent" for name in ("cookie", "authorization") if name in headers]
    user_agent = headers.get("user-agent", "")
    if suite.gate.search(user_agent) or not re.fullmatch(runtime.card_user_agent, user_agent):
        problems.append(f"User-Agent {user_agent!r} must match {runtime.card_user_agent!r} and no marker")
    return problems


def check_case(suite, args, runtime, case, expect):
    """The problems of one case through the edge (empty: it passed)."""
    raw = request_bytes(case)
    answer = exchange(args.edge, raw, case["method"])
    direct = exchange(args.origin, raw, case["method"])
    calls = control(args.card, "GET", f"/_calls/{case['name']}")
    problems = call_problems(suite, case, calls, expect["card_calls"], runtime)
    page = suite.pages[case["page"]]
    if suite.is_gated(case) and is_html_200(page):
        problems += agent_header_problems(answer, direct, runtime)
        problems += body_problems(answer, expected_bodies(suite, case, expect, runtime))
    else:
        problems += identity_problems(answer, direct, runtime)
    return problems


def guarded(check, *args):
    try:
        return check(*args)
    except (OSError, ValueError, EOFError, zlib.error) as error:
        return [f"{type(error).__name__}: {error}"]


def run_check(args):
    suite = Suite()
    runtime = RUNTIMES[args.runtime]
    names = args.case or list(suite.cases)
    unknown = [name for name in names if name not in suite.cases]
    if unknown:
        print(f"unknown cases: {', '.join(unknown)}", file=sys.stderr)
        return 2
    runs = [(suite.cases[name], expectation(suite, suite.cases[name], args.runtime)) for name in names]
    runs = [(case, expect) for case, expect in runs if not expect.get("skip")]
    control(args.card, "POST", "/_reset")
    failed = 0
    with ThreadPoolExecutor(WORKERS) as pool:
        results = pool.map(lambda run: guarded(check_case, suite, args, runtime, *run), runs)
        for (case, _), problems in zip(runs, results):
            failed += bool(problems)
            print(f"FAIL {case['name']}: {'; '.join(problems)}" if problems else f"ok {case['name']}",
                  flush=True)
    print(f"{len(runs) - failed} passed, {failed} failed, {len(names) - len(runs)} not applicable"
          f" to {args.runtime}")
    if args.report:
        write_report(args.report, suite, runs)
    return 1 if failed else 0


def write_report(path, suite, runs):
    """One JSON object per case run: the expected agent flag, outcome and cause."""
    with open(path, "w", encoding="utf-8") as out:
        for case, expect in runs:
            out.write(json.dumps({"case": case["name"], "agent": suite.is_gated(case),
                                  "outcome": expect["outcome"], "cause": expect["cause"]}) + "\n")


# ---------------------------------------------------------------- command line


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    stubs = commands.add_parser("stubs", help="run the origin and card stubs until killed")
    stubs.add_argument("--origin-port", type=int, required=True)
    stubs.add_argument("--card-port", type=int, required=True)
    stubs.add_argument("--markup", choices=sorted(MARKUP), required=True)
    stubs.add_argument("--budget-ms", type=int, required=True)
    check = commands.add_parser("check", help="run the cases through an edge")
    check.add_argument("--edge", required=True)
    check.add_argument("--origin", required=True)
    check.add_argument("--card", required=True)
    check.add_argument("--runtime", choices=sorted(RUNTIMES), required=True)
    check.add_argument("--case", action="extend", nargs="+", metavar="NAME")
    check.add_argument("--report", metavar="FILE")
    args = parser.parse_args()
    return run_stubs(args) if args.command == "stubs" else run_check(args)


if __name__ == "__main__":
    sys.exit(main())
