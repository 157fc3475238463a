#!/usr/bin/env python3
"""Checks agentcard.vcl's log lines against the causes the shared cases expect.

    varnishncsa -d -b -q 'VCL_Log ~ "^agentcard:"' -F '%{VCL_Log:agentcard}x %U%q' \
        | python3 recipes/varnish/check-log.py REPORT

REPORT is the file `harness.py check --report` wrote (one JSON object per case run: case,
agent, outcome, cause). Each input line is one log line of the VCL: its word (`card` or a
fail-open cause), details, and the backend request's URL: the page's (`/<case>…`) or the
card call's (`/fragment?…&page_url=…/<case>…`). Per case:
- not an agent: no line;
- composed: `card`, and no cause;
- unchanged with a cause: that cause and no `card`, except `no_article`, which the VCL cannot
  see (a page without the include simply has no card call) and so never logs;
- unchanged without a cause (a page ESI does not compose, such as a page not in UTF-8):
  at most `not_html`.
Exit status 1, with one line per problem, when a case's lines differ.
"""

import json
import sys
from collections import defaultdict
from urllib.parse import parse_qsl, urlsplit

CAUSES = {"no_fill", "card_error", "timeout", "unreachable", "not_html"}


def case_of(url):
    parts = urlsplit(url)
    if parts.path == "/fragment":
        page_url = dict(parse_qsl(parts.query)).get("page_url", "")
        path = urlsplit(page_url).path
    else:
        path = parts.path
    return path.lstrip("/").split("/")[0]


def main():
    runs = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
    logged = defaultdict(list)
    for line in sys.stdin:
        fields = line.split()
        if len(fields) >= 2:
            logged[case_of(fields[-1])].append(fields[0])
    problems = []
    for run in runs:
        words = set(logged.pop(run["case"], []))
        cause = run["cause"]
        if not run["agent"]:
            wanted_ok = not words
            wanted = "no log line"
        elif run["outcome"] == "composed":
            wanted_ok = words == {"card"}
            wanted = "card"
        elif cause == "no_article":
            wanted_ok = not words
            wanted = "no log line (no include on the page)"
        elif cause:
            wanted_ok = cause in words and "card" not in words and words <= CAUSES
            wanted = cause
        else:
            wanted_ok = words <= {"not_html"}
            wanted = "nothing or not_html"
        if not wanted_ok:
            problems.append(f"log of {run['case']}: {sorted(words)}, expected {wanted}")
    for case, words in sorted(logged.items()):
        problems.append(f"log lines for {case!r}, which no case ran: {words}")
    for problem in problems:
        print(problem)
    print(f"log check: {len(runs) - len(problems)} of {len(runs)} cases logged as expected")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
