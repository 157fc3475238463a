#!/usr/bin/env python3
"""Differential fuzzing of HTTP/1.1 framing: `agentcard edge` against nginx and HAProxy.

    diff.py run --edge-bin PATH [--minutes N] [--streams N] [--seed S] [--lanes N] [--summary FILE] [--findings DIR]
    diff.py replay --edge-bin PATH [--corpus DIR]

Each stream (grammar.py) goes, byte for byte, through the six chains of chains.py; the echo
origin (origin.py) records what reached it. A stream's judgement compares, per chain, the
requests the origin saw (method, target without scheme and authority, body) and the answers
the client read. A finding, for the chains through the edge:

- `smuggled`: the origin read a request the client never sent (a `/hidden/` target, hidden in
  a body), or more requests than the client sent, or the client read more final answers;
- `edge-differs`: what the edge delivered is not a prefix of what nginx delivered, nor of what
  HAProxy delivered (it forwards what both refuse, or frames a request in a way neither does);
- `front-edge-differs`: behind nginx (or HAProxy), the edge delivered what that front alone
  would not have (not a prefix of it).

The edge refusing more than both (a prefix) is no finding: it is counted as `edge-stricter`.
Disagreements between nginx and HAProxy, and their own smuggling by the lenient origin's
reading, are counted, not findings. A finding must hold three times more with every wait eight
times longer (PATIENCE: a busy machine's slow proxy is no finding); it is then minimised
(requests, then mutations, left out while it holds) and written to the findings folder; the corpus (corpus/*.json) replays kept
findings, each expected to be none any more. Every line is `ok NAME` or `FAIL NAME: why`.
"""

import argparse
import json
import random
import re
import signal
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import chains as chains_module
import grammar

HERE = Path(__file__).resolve().parent
CLIENT_TIMEOUT_S = 4
# Silence after which the client closes its sending side (the stream is all sent by then).
QUIET_S = 0.25
# Time given to the origin to record what a proxy sent after the client's last answer.
SETTLE_S = 0.03
# Starts of the chains tried before giving up (a port taken meanwhile by another process).
START_ATTEMPTS = 3
# Seconds between two progress lines of a campaign.
PROGRESS_S = 60
# Runs a finding must hold in before it is minimised and kept.
REPRODUCTIONS = 3
# How many times longer than a campaign's a finding's runs wait (the quiet before the client
# half-closes, the origin's settling): on a busy machine a proxy may forward a pipelined
# request after the client went quiet, and a client that half-closed first makes it drop the
# rest. A finding must hold at this patience too: the machine's load never makes one.
PATIENCE = 8
EDGE_CHAINS = ("edge", "nginx-edge", "haproxy-edge")
FINAL_STATUS = re.compile(rb"(?:^|\n)HTTP/\d\.\d ([2-5]\d\d)")
# The stream's tag in a request's target (grammar.py: `/d/<tag>.<n>`, `/hidden/<tag>.<n>`).
STREAM_TAG = re.compile(r"/(?:d|hidden)/([0-9A-Za-z-]+)\.\d")
AUTHORITY = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/?]*")


# ---------------------------------------------------------------- one stream through one chain


def exchange(port, data, patience=1):
    """Sends `data` and reads until the server closes. When the server goes quiet first (for
    QUIET_S times `patience`), the sending side is closed: a server still waiting for bytes of
    the stream then ends it."""
    got = bytearray()
    ended = "closed"
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT_S) as conn:
            deadline = time.monotonic() + CLIENT_TIMEOUT_S
            half_closed = False
            try:
                conn.sendall(data)
            except OSError:
                ended = "reset while sending"
            while True:
                wait = deadline - time.monotonic() if half_closed else QUIET_S * patience
                conn.settimeout(max(0.01, wait))
                try:
                    piece = conn.recv(65536)
                except TimeoutError:
                    if half_closed:
                        ended = "timeout"
                        break
                    half_closed = True
                    try:
                        conn.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    continue
                except OSError:
                    ended = "reset"
                    break
                if not piece:
                    break
                got += piece
    except OSError as error:
        ended = f"connect: {error}"
    return bytes(got), ended


class OriginLog:
    """The new records of one origin port since the last look."""

    def __init__(self, path):
        self.path = path
        self.offset = 0

    def take(self):
        try:
            with open(self.path, "rb") as log:
                log.seek(self.offset)
                data = log.read()
        except FileNotFoundError:
            return []
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        return [json.loads(line) for line in complete.splitlines()]


class Lane:
    """One lane's six chains, a stream at a time."""

    def __init__(self, ports, workdir):
        self.ports = ports
        self.logs = {chain: OriginLog(Path(workdir) / f"origin-{origin}.jsonl") for chain, (_, origin) in ports.items()}
        self.pool = ThreadPoolExecutor(len(ports))

    def run(self, data, tag, patience=1):
        """The stream's results per chain; records of another stream's requests (tagged
        otherwise, come late) are left out."""
        for log in self.logs.values():
            log.take()
        send = lambda chain: exchange(self.ports[chain][0], data, patience)
        answers = dict(zip(self.ports, self.pool.map(send, self.ports)))
        time.sleep(SETTLE_S * patience)
        return {chain: {"requests": [r for r in self.logs[chain].take() if tag_of(r["target"]) in (None, tag)],
                        "answers": answers[chain][0], "ended": answers[chain][1]} for chain in self.ports}


def tag_of(target):
    found = STREAM_TAG.search(target)
    return found.group(1) if found else None


# ---------------------------------------------------------------- judging


def origin_form(target):
    """An absolute-form target as origin-form (`http://host?x` is `/?x`), as nginx passes it on."""
    found = AUTHORITY.match(target)
    if not found:
        return target
    rest = target[found.end():]
    return rest if rest.startswith("/") else "/" + rest


def delivered(result):
    return [(r["method"], origin_form(r["target"]), r["body"]) for r in result["requests"]]


def is_subsequence(short, long):
    """Whether every request of `short` is in `long`, in the same order (the edge may refuse
    a request a front passed on, never deliver one the front did not)."""
    rest = iter(long)
    return all(any(item == other for other in rest) for item in short)


def answers(result):
    return len(FINAL_STATUS.findall(result["answers"]))


def kind_of(extra, sent, chain_count):
    """`smuggled` when what only the edge's chain delivered is a request hidden in a body or
    one more than the client sent; `differs` otherwise."""
    if any("/hidden/" in target for _, target, _ in extra) or chain_count > sent:
        return "smuggled"
    return "differs"


def is_yardstick(result, sent):
    """Whether a front alone framed the stream by itself: not when the client waited out its
    time-out (the origin behind it waited for bytes the front framed otherwise: HAProxy reads
    a Content-Length of 2^64 as 0), nor when the front answered that its upstream failed, nor
    when the lenient origin read more requests from it than the client sent (the front and
    that origin out of step: what it recorded is not the front's framing)."""
    requests = result["requests"]
    out_of_step = len(requests) > sent or any("/hidden/" in r["target"] for r in requests)
    return (result["ended"] != "timeout" and not out_of_step
            and not re.search(rb"(?:^|\n)HTTP/\d\.\d 50[234]", result["answers"]))


def judge(results, sent):
    """(findings, notes): findings as (kind, chain, why); notes are counted only."""
    findings, notes = [], []
    seen = {chain: delivered(result) for chain, result in results.items()}
    fronts = [front for front in ("nginx", "haproxy") if is_yardstick(results[front], sent)]
    notes += [f"{front}-no-yardstick" for front in ("nginx", "haproxy") if front not in fronts]
    edge = seen["edge"]
    if not fronts:
        return findings, notes
    if not any(is_subsequence(edge, seen[front]) for front in fronts):
        extra = [r for r in edge if all(r not in seen[front] for front in fronts)]
        kind = kind_of(extra, max([sent] + [len(seen[front]) for front in fronts]), len(edge))
        findings.append((f"edge-{kind}", "edge", f"edge {edge!r}, " + ", ".join(f"{f} {seen[f]!r}" for f in fronts)))
    elif all(edge != seen[front] for front in fronts):
        notes.append("edge-stricter")
    most_answers = max([sent] + [answers(results[front]) for front in fronts])
    if answers(results["edge"]) > most_answers:
        findings.append(("edge-answers", "edge", f"the client read {answers(results['edge'])} answers to {sent} requests"))
    for front in fronts:
        chain = f"{front}-edge"
        if not is_subsequence(seen[chain], seen[front]):
            extra = [r for r in seen[chain] if r not in seen[front]]
            kind = kind_of(extra, max(sent, len(seen[front])), len(seen[chain]))
            findings.append((f"{chain}-{kind}", chain, f"{chain} {seen[chain]!r}, {front} {seen[front]!r}"))
        elif seen[chain] != seen[front]:
            notes.append(f"{chain}-stricter")
        if answers(results[chain]) > max(sent, answers(results[front])):
            findings.append((f"{chain}-answers", chain,
                             f"the client read {answers(results[chain])} answers to {sent} requests"))
        if len(seen[front]) > sent or any("/hidden/" in t for _, t, _ in seen[front]):
            notes.append(f"{front}-delivers-more")
    if seen["nginx"] != seen["haproxy"]:
        notes.append("nginx-haproxy-differ")
    return findings, notes


def show(args):
    """One stream of the corpus or the findings, chain by chain."""
    entry = json.loads(Path(args.file).read_text())
    started, (lane,) = start(args, 1)
    try:
        results = lane.run(entry["stream"].encode("latin-1"), entry["tag"])
    finally:
        started.stop()
    print(repr(entry["stream"]))
    for chain, result in results.items():
        print(f"{chain}: {delivered(result)!r} answers {FINAL_STATUS.findall(result['answers'])} ({result['ended']})")
    print(judge(results, entry["requests"]))
    return 0


# ---------------------------------------------------------------- minimising and the corpus


def finding_kinds(lane, spec, tag):
    results = lane.run(grammar.build_stream(spec, tag), tag, PATIENCE)
    findings, _ = judge(results, len(spec.requests))
    return {kind for kind, _, _ in findings}, findings, results


def minimise(lane, spec, tag, kind):
    """Leaves out requests, then mutations, while the finding of `kind` holds."""
    def holds(candidate):
        return candidate.requests and kind in finding_kinds(lane, candidate, tag)[0]

    changed = True
    while changed:
        changed = False
        for at in range(len(spec.requests)):
            candidate = grammar.Spec(spec.requests[:at] + spec.requests[at + 1:])
            if holds(candidate):
                spec, changed = candidate, True
                break
        for at, request in enumerate(spec.requests):
            for name in request.mutations:
                fewer = grammar.RequestSpec(request.seed, [m for m in request.mutations if m != name])
                candidate = grammar.Spec(spec.requests[:at] + [fewer] + spec.requests[at + 1:])
                if holds(candidate):
                    spec, changed = candidate, True
                    break
            if changed:
                break
    return spec


def corpus_entry(name, spec, tag, findings):
    data = grammar.build_stream(spec, tag)
    return {"name": name, "tag": tag, "spec": spec.to_json(), "mutations": spec.mutation_names(),
            "requests": len(spec.requests), "stream": data.decode("latin-1"),
            "found": [{"kind": k, "chain": c, "why": w} for k, c, w in findings]}


# ---------------------------------------------------------------- the modes


def start(args, lanes):
    """The chains, started on fresh ports again when another process took one first."""
    for _ in range(START_ATTEMPTS - 1):
        try:
            return start_once(args, lanes)
        except RuntimeError as error:
            print(f"# the chains did not start ({str(error).splitlines()[0]}); again", flush=True)
    return start_once(args, lanes)


def start_once(args, lanes):
    workdir = tempfile.mkdtemp(prefix="agentcard-diff.")
    started = chains_module.Chains(workdir, args.edge_bin, lanes)
    return started, [Lane(ports, workdir) for ports in started.lanes]


def replay(args):
    entries = sorted(Path(args.corpus).glob("*.json"))
    started, (lane,) = start(args, 1)
    failures = 0
    try:
        for path in entries:
            entry = json.loads(path.read_text())
            data = entry["stream"].encode("latin-1")
            findings, _ = judge(lane.run(data, entry["tag"]), entry["requests"])
            if findings:
                findings, _ = judge(lane.run(data, entry["tag"], PATIENCE), entry["requests"])
            if findings:
                failures += 1
                print(f"FAIL diff corpus {entry['name']}: {findings[0][1]}: {findings[0][0]}: {findings[0][2]}")
            else:
                print(f"ok diff corpus {entry['name']} ({', '.join(entry['mutations'])})")
        for dead in started.dead_edges():
            failures += 1
            print(f"FAIL diff corpus: an agentcard edge died ({dead})")
    finally:
        started.stop()
    return 1 if failures else 0


class Campaign:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.streams = 0
        self.requests = 0
        self.mutations = Counter()
        self.combinations = set()
        self.notes = Counter()
        self.disagreements = Counter()
        self.front_refused = {"nginx-edge-stricter": Counter(), "haproxy-edge-stricter": Counter()}
        self.findings = []
        self.deadline = time.monotonic() + args.minutes * 60
        self.findings_dir = Path(args.findings)

    def next_index(self):
        with self.lock:
            if self.streams >= self.args.streams or time.monotonic() >= self.deadline:
                return None
            self.streams += 1
            return self.streams - 1

    def lane_loop(self, number, lane):
        rng = random.Random(f"{self.args.seed}/{number}")
        while (index := self.next_index()) is not None:
            spec = grammar.random_spec(rng)
            tag = f"{self.args.seed}-{number}-{index}"
            results = lane.run(grammar.build_stream(spec, tag), tag)
            findings, notes = judge(results, len(spec.requests))
            with self.lock:
                self.requests += len(spec.requests)
                for request in spec.requests:
                    self.mutations.update(request.mutations)
                    self.combinations.add(tuple(sorted(request.mutations)))
                self.notes.update(notes)
                if "nginx-haproxy-differ" in notes:
                    self.disagreements.update(spec.mutation_names())
                for note in notes:
                    if note.endswith("-stricter") and note != "edge-stricter":
                        self.front_refused[note].update(spec.mutation_names())
            if findings:
                self.record(lane, spec, tag, findings)

    def record(self, lane, spec, tag, findings):
        kind = findings[0][0]
        if not all(kind in finding_kinds(lane, spec, tag)[0] for _ in range(REPRODUCTIONS)):
            with self.lock:
                self.notes["finding-not-reproduced"] += 1
            return
        small = minimise(lane, spec, tag, kind)
        _, small_findings, _ = finding_kinds(lane, small, tag)
        name = f"{kind}-{'-'.join(small.mutation_names()) or 'none'}"
        entry = corpus_entry(name, small, tag, small_findings or findings)
        with self.lock:
            self.findings.append(entry)
            self.findings_dir.mkdir(parents=True, exist_ok=True)
            (self.findings_dir / f"{len(self.findings):03d}-{name}.json").write_text(json.dumps(entry, indent=1) + "\n")
        print(f"FAIL diff generation {name}: {entry['found'][0]['chain']}: {entry['found'][0]['why']}", flush=True)

    def summary(self, seconds, dead):
        return {"streams": self.streams, "requests": self.requests, "seconds": round(seconds, 1),
                "streams_per_second": round(self.streams / max(seconds, 1e-9), 1),
                "mutations_used": len(self.mutations), "mutations_in_grammar": len(grammar.MUTATIONS),
                "distinct_combinations": len(self.combinations), "findings": len(self.findings),
                "dead_edges": len(dead), "notes": dict(self.notes),
                "nginx_haproxy_disagreements_by_mutation": dict(self.disagreements.most_common()),
                "refused_by_the_edge_behind_a_front_by_mutation": {k: dict(v.most_common()) for k, v in self.front_refused.items()}}


def run(args):
    started, lanes = start(args, args.lanes)
    campaign = Campaign(args)
    began = time.monotonic()
    try:
        threads = [threading.Thread(target=campaign.lane_loop, args=(n, lane), daemon=True)
                   for n, lane in enumerate(lanes)]
        for thread in threads:
            thread.start()
        while alive := [thread for thread in threads if thread.is_alive()]:
            alive[0].join(timeout=PROGRESS_S)
            if not any(thread.is_alive() for thread in threads):
                break
            print(f"# {campaign.streams} streams, {len(campaign.findings)} findings, "
                  f"{time.monotonic() - began:.0f} s", flush=True)
        dead = started.dead_edges()
    finally:
        started.stop()
    summary = campaign.summary(time.monotonic() - began, dead)
    if args.summary:
        Path(args.summary).write_text(json.dumps(summary, indent=1) + "\n")
    for argv in dead:
        print(f"FAIL diff generation: an agentcard edge died ({argv})")
    if not campaign.findings and not dead:
        print(f"ok diff generation: {summary['streams']} streams ({summary['requests']} requests, "
              f"{summary['streams_per_second']}/s), {summary['mutations_used']} mutations in "
              f"{summary['distinct_combinations']} combinations, no finding")
    print(json.dumps({k: v for k, v in summary.items() if not k.endswith("_by_mutation")}))
    return 1 if campaign.findings or dead else 0


def main():
    # A TERM stops the chains' processes as an interrupt does (the `finally` of each mode).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    for mode in ("run", "replay", "show"):
        one = sub.add_parser(mode)
        one.add_argument("--edge-bin", required=True)
    sub.choices["run"].add_argument("--minutes", type=float, default=1.0)
    sub.choices["run"].add_argument("--streams", type=int, default=10**9)
    sub.choices["run"].add_argument("--seed", default="1")
    sub.choices["run"].add_argument("--lanes", type=int, default=3)
    sub.choices["run"].add_argument("--summary")
    sub.choices["run"].add_argument("--findings", default=str(HERE / "findings"))
    sub.choices["replay"].add_argument("--corpus", default=str(HERE / "corpus"))
    sub.choices["show"].add_argument("file")
    args = parser.parse_args()
    return {"run": run, "replay": replay, "show": show}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
