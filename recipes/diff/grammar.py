"""Request streams from a grammar of HTTP/1.1, with the mutations known to split parsers.

A stream is one to three pipelined requests, each built from a seed: a base request (method,
target, headers, a body framed by nothing, Content-Length or chunked) and zero to three named
mutations applied in order. A stream is described by its `Spec` (the seeds and the mutation
names of each request), so that it can be rebuilt with fewer requests or mutations
(minimising) and kept in the corpus as bytes.

Every request's target carries `/d/<tag>/<n>`; a body may carry a whole request whose target
holds `/hidden/`: a parser that reads it as a request of its own has been smuggled to.
"""

import random
from dataclasses import dataclass, field

HOST = b"news.example"
AGENT_UA = b"Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)"
HUMAN_UA = b"Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0"


@dataclass
class Chunk:
    size: bytes  # the size as written
    ext: bytes = b""
    size_eol: bytes = b"\r\n"
    data: bytes = b""
    data_eol: bytes = b"\r\n"


@dataclass
class Header:
    name: bytes
    value: bytes
    sep: bytes = b": "
    eol: bytes = b"\r\n"


@dataclass
class Request:
    """One request of a stream, its parts as bytes, so that mutations can bend any of them."""

    tag: str
    method: bytes = b"GET"
    target: bytes = b"/"
    version: bytes = b"HTTP/1.1"
    request_line_seps: tuple = (b" ", b" ")
    request_line_eol: bytes = b"\r\n"
    headers: list = field(default_factory=list)
    head_end: bytes = b"\r\n"
    prefix: bytes = b""
    # The body: `content` when framed by length (or not at all), `chunks` when chunked.
    content: bytes = b""
    chunks: list | None = None
    last_chunk: Chunk | None = None
    trailers: list = field(default_factory=list)
    # Set by a mutation: the body bytes sent are cut or padded (a length that lies).
    body_override: bytes | None = None

    def header(self, name):
        for header in self.headers:
            if header.name.strip().lower() == name.lower():
                return header
        return None

    def header_or_new(self, name, value):
        """Header `name`, added with `value` when an earlier mutation renamed or removed it."""
        found = self.header(name)
        if found is None:
            found = Header(name, value)
            self.headers.append(found)
        return found

    def body(self):
        if self.body_override is not None:
            return self.body_override
        if self.chunks is None:
            return self.content
        out = bytearray()
        for chunk in self.chunks + [self.last_chunk]:
            out += chunk.size + chunk.ext + chunk.size_eol + chunk.data
            if chunk is not self.last_chunk:
                out += chunk.data_eol
        for header in self.trailers:
            out += header.name + header.sep + header.value + header.eol
        return bytes(out + b"\r\n")

    def render(self):
        out = bytearray(self.prefix)
        first, second = self.request_line_seps
        out += self.method + first + self.target
        if self.version:
            out += second + self.version
        out += self.request_line_eol
        for header in self.headers:
            out += header.name + header.sep + header.value + header.eol
        out += self.head_end
        return bytes(out + self.body())


def hidden_request(tag):
    return b"GET /hidden/" + tag.encode() + b" HTTP/1.1\r\nHost: " + HOST + b"\r\n\r\n"


def base_request(rng, tag):
    """A well-formed request: what the mutations start from."""
    request = Request(tag=tag)
    request.method = rng.choice([b"GET", b"GET", b"GET", b"POST", b"POST", b"HEAD", b"PUT", b"OPTIONS"])
    request.target = b"/d/" + tag.encode() + rng.choice([b"", b"?q=1", b"/a.html"])
    request.headers.append(Header(b"Host", HOST))
    request.headers.append(Header(b"User-Agent", rng.choice([AGENT_UA, HUMAN_UA])))
    framing = rng.choice(["none", "length", "chunked"] if request.method in (b"POST", b"PUT") else ["none"] * 4 + ["length", "chunked"])
    if framing == "none":
        return request
    content = hidden_request(tag) if rng.random() < 0.5 else bytes(rng.choice(b"abcxyz0123") for _ in range(rng.randint(1, 40)))
    if framing == "length":
        request.content = content
        request.headers.append(Header(b"Content-Length", str(len(content)).encode()))
    else:
        set_chunked(request, content, rng)
    return request


def set_chunked(request, content, rng):
    """Frames `content` chunked (one or two chunks), with the header."""
    cut = rng.randint(1, len(content)) if len(content) > 1 else len(content)
    pieces = [p for p in (content[:cut], content[cut:]) if p]
    request.chunks = [Chunk(b"%x" % len(p), data=p) for p in pieces]
    request.last_chunk = Chunk(b"0")
    request.content = content
    if not request.header(b"transfer-encoding"):
        request.headers.append(Header(b"Transfer-Encoding", b"chunked"))


def ensure_body(request, rng):
    """A body for the mutations that bend one; chunked when none was framed yet."""
    if request.chunks is None and not request.content:
        set_chunked(request, hidden_request(request.tag), rng)


def ensure_chunked(request, rng):
    if request.chunks is None:
        content = request.content or hidden_request(request.tag)
        request.headers = [h for h in request.headers if h.name.lower() != b"content-length"]
        request.content = b""
        set_chunked(request, content, rng)


def any_header(request, rng):
    return rng.choice(request.headers)


def framing_header(request, rng):
    framing = [h for h in request.headers if h.name.strip().lower() in (b"content-length", b"transfer-encoding")]
    return rng.choice(framing) if framing else any_header(request, rng)


# ---------------------------------------------------------------- the mutations


def m_cl_and_te(request, rng):
    ensure_chunked(request, rng)
    length = Header(b"Content-Length", str(rng.choice([0, 3, len(request.content), len(request.body())])).encode())
    at = rng.randint(0, len(request.headers))
    request.headers.insert(at, length)


def m_te_twice(request, rng):
    ensure_chunked(request, rng)
    request.headers.append(Header(b"Transfer-Encoding", rng.choice([b"chunked", b"identity", b"gzip", b""])))
    if rng.random() < 0.5:
        request.headers.reverse()


def m_cl_twice(request, rng):
    if request.chunks is None and not request.content:
        request.content = hidden_request(request.tag)
    if request.chunks is None and not request.header(b"content-length"):
        request.headers.append(Header(b"Content-Length", str(len(request.content)).encode()))
    first = request.header(b"content-length") or Header(b"Content-Length", b"0")
    request.headers.append(Header(b"Content-Length", rng.choice([first.value, b"0", b"5", first.value + b"0"])))


TE_VALUES = [b"chunked ", b" chunked", b"\tchunked", b"Chunked", b"CHUNKED", b"chunked, identity", b"identity, chunked",
             b"gzip, chunked", b"chunked;q=1", b"xchunked", b"chunk", b"chunked\x00", b"chunked\xff", b'"chunked"',
             b"chunked,", b", chunked", b"chunked, chunked", b"identity", b"\x0bchunked", b"chunked\x0c"]


def m_te_value(request, rng):
    ensure_chunked(request, rng)
    request.header_or_new(b"Transfer-Encoding", b"chunked").value = rng.choice(TE_VALUES)


def m_cl_value(request, rng):
    if request.chunks is not None:
        request.headers.append(Header(b"Content-Length", b"0"))
    elif not request.content:
        request.content = hidden_request(request.tag)
        request.headers.append(Header(b"Content-Length", b"0"))
    header = request.header_or_new(b"Content-Length", b"0")
    n = str(len(request.content)).encode()
    header.value = rng.choice([b"+" + n, b"-" + n, n + b" ", b" " + n, b"0" + n, n + b"," + n, n + b", " + n,
                               b"0x%x" % len(request.content), n + b".0", b"18446744073709551616" , b"18446744073709551621",
                               n + b"\x00", b"1e1", b"", n + b"a", b"\t" + n, b"0" * 30 + n])


def m_space_before_colon(request, rng):
    header = framing_header(request, rng)
    header.name += rng.choice([b" ", b"\t", b"  "])


def m_obs_fold(request, rng):
    header = framing_header(request, rng)
    header.value = rng.choice([b"\r\n " + header.value, b"\r\n\t" + header.value, header.value[:1] + b"\r\n " + header.value[1:]])


def m_bare_cr(request, rng):
    header = any_header(request, rng)
    where = rng.choice(["value", "eol", "name"])
    if where == "value":
        header.value = header.value[:1] + b"\r" + header.value[1:]
    elif where == "eol":
        header.eol = b"\r"
    else:
        header.name = b"X\rFoo"


def m_bare_lf(request, rng):
    where = rng.choice(["header", "end", "end2", "request_line"])
    if where == "header":
        any_header(request, rng).eol = b"\n"
    elif where == "end":
        request.head_end = b"\n"
        request.headers[-1].eol = rng.choice([b"\n", b"\r\n"])
    elif where == "end2":
        request.head_end = b"\n"
    else:
        request.request_line_eol = b"\n"


def m_chunk_ext(request, rng):
    ensure_chunked(request, rng)
    chunk = rng.choice(request.chunks + [request.last_chunk])
    chunk.ext = rng.choice([b";a=b", b";", b" ;x", b';x="a;b"', b";" + b"e" * 300, b";x\r", b";x=\x00", b"; x", b"\t;x"])


def m_chunk_zeros(request, rng):
    ensure_chunked(request, rng)
    chunk = rng.choice(request.chunks + [request.last_chunk])
    chunk.size = b"0" * rng.choice([1, 3, 20]) + chunk.size


def m_chunk_overflow(request, rng):
    ensure_chunked(request, rng)
    chunk = request.chunks[0]
    chunk.size = rng.choice([b"1", b"10000000", b"ffffffff"]) + b"%016x" % len(chunk.data)


def m_chunk_0x(request, rng):
    ensure_chunked(request, rng)
    chunk = rng.choice(request.chunks)
    chunk.size = rng.choice([b"0x", b"0X", b"+", b"-"]) + chunk.size


def m_chunk_ws(request, rng):
    ensure_chunked(request, rng)
    chunk = rng.choice(request.chunks + [request.last_chunk])
    chunk.size = rng.choice([chunk.size + b" ", b" " + chunk.size, chunk.size + b"\t", chunk.size.upper() + b" "])


def m_chunk_bare_lf(request, rng):
    ensure_chunked(request, rng)
    chunk = rng.choice(request.chunks + [request.last_chunk])
    if chunk is request.last_chunk or rng.random() < 0.5:
        chunk.size_eol = rng.choice([b"\n", b"\r", b"\r\r\n"])
    else:
        chunk.data_eol = rng.choice([b"\n", b"\r", b"", b"xx"])


def m_chunk_size_lies(request, rng):
    ensure_chunked(request, rng)
    chunk = rng.choice(request.chunks)
    chunk.size = b"%x" % max(0, len(chunk.data) + rng.choice([-2, -1, 1, 2, 16]))


def m_trailers(request, rng):
    ensure_chunked(request, rng)
    request.trailers.append(rng.choice([Header(b"X-Trailer", b"1"), Header(b"Content-Length", b"5"),
                                        Header(b"Transfer-Encoding", b"chunked"), Header(b"X-T", b"1", eol=b"\n"),
                                        Header(b"bad trailer", b"x"), Header(b"Host", b"other.example")]))


def m_nul_or_high(request, rng):
    header = any_header(request, rng)
    byte = rng.choice([b"\x00", b"\xff", b"\x80", b"\x7f", b"\x01"])
    if rng.random() < 0.5:
        header.name = header.name[:2] + byte + header.name[2:]
    else:
        header.value = header.value[:2] + byte + header.value[2:]


def m_absolute_form(request, rng):
    path = request.target
    request.target = rng.choice([b"http://" + HOST, b"http://other.example", b"https://" + HOST, b"HTTP://" + HOST,
                                 b"http://" + HOST + b":80", b"http://user@" + HOST, b"ftp://" + HOST]) + path


def m_odd_target(request, rng):
    path = request.target
    request.target = rng.choice([b"*", HOST + b":80", path + b" x", path + b"#frag", b"/" + path, path + b"/%00",
                                 path + b"\x7f", b"", path + b"\tb", b"?x", path + b"/../..", path.replace(b"/", b"\\"),
                                 path + b"\xff", b"x" + path])


def m_http10_keepalive(request, rng):
    request.version = b"HTTP/1.0"
    request.headers.append(Header(b"Connection", rng.choice([b"keep-alive", b"Keep-Alive", b"keep-alive, x"])))


def m_version(request, rng):
    request.version = rng.choice([b"HTTP/1.2", b"HTTP/2.0", b"", b"http/1.1", b"HTTP/1.1 ", b"HTTP/01.1", b"HTTP/1.10",
                                  b"HTTP/1", b"HTTP/9.9", b"HTTP/1.0"])


def m_expect(request, rng):
    ensure_body(request, rng)
    request.headers.append(Header(b"Expect", rng.choice([b"100-continue", b"100-Continue", b"foo", b"100-continue, x"])))


def m_upgrade(request, rng):
    if rng.random() < 0.5:
        request.headers += [Header(b"Connection", b"Upgrade"), Header(b"Upgrade", b"websocket"),
                            Header(b"Sec-WebSocket-Key", b"dGhlIHNhbXBsZSBub25jZQ=="), Header(b"Sec-WebSocket-Version", b"13")]
    else:
        request.headers += [Header(b"Connection", b"Upgrade, HTTP2-Settings"), Header(b"Upgrade", b"h2c"),
                            Header(b"HTTP2-Settings", b"AAMAAABkAARAAAAAAAIAAAAA")]


def m_body_on_get(request, rng):
    request.method = rng.choice([b"GET", b"HEAD", b"OPTIONS", b"DELETE", b"TRACE"])
    ensure_body(request, rng)


def m_host(request, rng):
    host = request.header(b"host")
    if host is None:
        return
    choice = rng.choice(["none", "two", "space", "empty", "port", "other"])
    if choice == "none":
        request.headers.remove(host)
    elif choice == "two":
        request.headers.append(Header(b"Host", rng.choice([HOST, b"other.example"])))
    elif choice == "space":
        host.value = HOST + b" x"
    elif choice == "empty":
        host.value = b""
    elif choice == "port":
        host.value = HOST + rng.choice([b":80", b":", b":99999", b":abc"])
    else:
        host.value = b"other.example"


def m_connection(request, rng):
    request.headers.append(Header(b"Connection", rng.choice([b"close", b"Content-Length", b"Transfer-Encoding",
                                                             b"close, Content-Length", b"Host", b"keep-alive, Transfer-Encoding"])))


def m_leading_crlf(request, rng):
    request.prefix = rng.choice([b"\r\n", b"\n", b"\r\n\r\n", b" ", b"\x00"])


def m_method(request, rng):
    request.method = rng.choice([b"get", b"G\x00T", b"FOO", b"GET /x", b"CONNECT", b"PRI", b"G ET", b"GET\t"])


def m_request_line_ws(request, rng):
    request.request_line_seps = rng.choice([(b"  ", b" "), (b"\t", b" "), (b" ", b"\t"), (b" ", b"  "), (b"\x0b", b" ")])


def m_header_name(request, rng):
    request.headers.insert(rng.randint(1, len(request.headers)), Header(rng.choice([b"", b"X(y)", b"X Y", b"X:Y",
                                                                                   b"\tX", b" Content-Length"]), b"1"))


def m_length_lies(request, rng):
    """The bytes sent are fewer or more than the framing says."""
    body = request.body()
    request.body_override = rng.choice([body[: max(0, len(body) - 3)], body + b"xyz", body + b"\r\n"])


def m_hop_headers(request, rng):
    request.headers.append(Header(rng.choice([b"Keep-Alive", b"Proxy-Connection", b"TE", b"Trailer"]),
                                  rng.choice([b"timeout=5", b"keep-alive", b"trailers", b"Content-Length"])))


MUTATIONS = {name[2:]: fn for name, fn in globals().items() if name.startswith("m_")}


# ---------------------------------------------------------------- streams


@dataclass
class RequestSpec:
    seed: int
    mutations: list  # names, applied in order


@dataclass
class Spec:
    requests: list  # of RequestSpec

    def mutation_names(self):
        return sorted({m for r in self.requests for m in r.mutations})

    def to_json(self):
        return [{"seed": r.seed, "mutations": r.mutations} for r in self.requests]

    @staticmethod
    def from_json(data):
        return Spec([RequestSpec(r["seed"], list(r["mutations"])) for r in data])


def random_spec(rng):
    requests = []
    for _ in range(rng.choice([1, 1, 2, 2, 3])):
        count = rng.choice([0, 1, 1, 1, 2, 2, 3])
        requests.append(RequestSpec(rng.getrandbits(32), rng.sample(sorted(MUTATIONS), count)))
    return Spec(requests)


def build_request(spec, tag, last):
    rng = random.Random(spec.seed)
    request = base_request(rng, tag)
    if last:
        # The server closes after the stream's last answer, instead of waiting for another.
        request.headers.append(Header(b"Connection", b"close"))
    for name in spec.mutations:
        MUTATIONS[name](request, rng)
    return request.render()


def build_stream(spec, stream_tag):
    """The stream's bytes, each request tagged `<stream_tag>.<n>`; the last asks to close."""
    last = len(spec.requests) - 1
    return b"".join(build_request(r, f"{stream_tag}.{n}", n == last) for n, r in enumerate(spec.requests))
