//! The integration tests: every one talks to a real `agentcard` server over real HTTP, on a
//! PostgreSQL database cloned from a template migrated once per run. The few that also run
//! tools beside PostgreSQL (Chromium, the Python packages) are ignored unless the feature
//! `external-tools` is on (`scripts/test.sh` turns it on).
//!
//! Index:
//! - `harness`: the template database and its clones, each test's own in-process server on a
//!   clone (`server()`, and `own_server` for a second one), the raw HTTP client, tenants.
//! - `fixtures`: what the test modules share: data builders, `assert_error`, the `admin` runner.
//! - `edge_fixtures`: what the edge's test modules share: `agentcard edge` as a child process.
//! - `console_fixtures`: what the console's test modules share: a browser of the console, people.
//! - `pg_proxy`: a TCP proxy between a server and its PostgreSQL that counts each connection's
//!   statements and can lose the answer to a report flush's `COMMIT`.
//!   Test modules import from these five, never from each other.
//! - `architecture`: the lines of ARCHITECTURE.md checked against the code (the console's files,
//!   no server kept beyond its test).
//! - `http_layer`: hostile input (headers, lengths, chunked bodies, timeouts, close, panics).
//! - `auth`: bearer tokens, `401`s, `GET /v1/me`, hosts.
//! - `conventions`: headers on every response, 404/405, body checks in their order.
//! - `limits`: the four rate limits and the client address behind a trusted proxy.
//! - `other_routes`: `/health`, `/ready`, `/contact`.
//! - `delivery`: serving `GET /fragment`: statuses, resolution, selection, formats, hosts, reports.
//! - `counting`: every `/fragment` request counted once in the report (pages, agents, hostile
//!   text, graceful stop, bounds, roll-up, the fold of the old per-request table).
//! - `admin_cli`: the `agentcard admin` commands through the real binary.
//! - `audit`: the audit log of writes through `/v1` and the CLI.
//! - `refused`: refused requests counted under the key's organisation by reason (`admin
//!   report`), and the live check's sample of an organisation's last requests.
//! - `report`: `agentcard admin report` over the report's aggregates (totals, groupings, window
//!   edges, formats, bad values, isolation).
//! - `why`: "why this card?" (`ops::why`) against `/fragment` on the same snapshot; the console's
//!   glance and a card's week of the report.
//! - `sites`: sites, the default fragment, isolation between organisations.
//! - `fragments`: fragment writes and list, the `{ref}` segment, pause warnings.
//! - `routes`: routing rules: list order, POST, PUT (atomic, concurrent), DELETE.
//! - `cards`: `/v1/cards` and eligibility lists (order of checks, atomicity, platform cards).
//! - `icon`: the site icon's fetch against loopback HTTPS servers (link, favicon, redirects,
//!   refused addresses, SVG, size, time), one attempt an hour, the background fetch on `/v1`
//!   and on the site's console page.
//! - `keys`: `/v1/keys` (shown once, newest first, repeatable revocation, isolation).
//! - `demo`: `agentcard admin demo` and the requests it prints.
//! - `edge`: `agentcard edge`: every shared case of `recipes/cases/` (with its log line per
//!   fail-open cause), a card from a real `agentcard serve`, `abc.txt`, configuration refusals;
//!   `edge::metrics`: the edge's `/metrics`, every request kind and fail-open cause counted.
//! - `edge_chaos`: hostile card services and origins under 200 agents at once, pages one after
//!   another behind a late card, clients hanging up mid-answer: budgets, bytes, nothing held.
//! - `edge_proxy`: the edge's discipline as a proxy, against scripted hostile origins and card
//!   services: heads read one way or refused, upstream connections pooled only clean, no status
//!   line after a head, no upgrades, framing toward the client its own.
//! - `console`: the console-only `admin` commands for cards, fragments, sites and keys.
//! - `same_messages`: each refused value through `/v1`, the `admin` CLI and the console's site map
//!   forms: the same field and message.
//! - `console_web`: the web console: hosts, security headers, sign-in and sessions, form tokens
//!   and origins, one-time links, members and the owners-only rules.
//! - `console_access`: the console's access rules walked from its page table (every page, a
//!   visitor not signed in, a viewer on members' and owners' pages and on every read, a member
//!   on owners' pages, an owner on every read, someone of another organisation), NUL and invalid UTF-8 in forms and queries, the audit of a password
//!   change.
//! - `console_acting`: acting where one reads: a fragment's own page (pause, activate, edit,
//!   delete), a rule's deletion confirmed with where its pages go, the last 24 hours' requests
//!   on every confirmation, eligibility grouped by site with a filter.
//! - `console_forms`: a refusal answered in place: a NUL or invalid UTF-8 in a value, a long
//!   refused value cut in its message, each on the same form with nothing written.
//! - `console_factors`: second factors: an authenticator app (codes computed from the secret on
//!   the page), each code once, a wrong one counted, recovery codes, removal, the owner's
//!   "require a second factor", the operator's reset.
//! - `console_flood`: sign-in under a flood: an unknown email costs no hash; unknown browsers'
//!   hashes budgeted per email and per address block; beyond the global rate, a proof of work
//!   (solved here, spent once across two instances) instead of `429`; known people's password
//!   changes and set-password links refused (`429`) beyond theirs, without hashing.
//! - `console_alerts`: the Alerts page (owners change, everyone reads and chooses their mail,
//!   refusals in place), the banner while one holds, and a fleet of three mailing each start
//!   and end once per subscriber (aiosmtpd, the test clock).
//! - `console_cards`: the console's card pages: each action read back, refusals, CSRF, audit, and
//!   the same rules and messages as `/v1`.
//! - `console_queries`: each console page's data in a bounded number of queries (counted by a
//!   proxy in front of PostgreSQL) for an organisation of 50 sites.
//! - `console_safety`: the console's safety rules below its pages (deletions never widen a
//!   card, the audit log in words, secrets made once, invitations, device cookies, mail).
//! - `console_sites`: the console's site map: sites, a page per site, fragments with and without a
//!   reference, the default, rules, the "test a page" box; read back, refusals, isolation.
//! - `console_wiring`: issue 34's rules on the console's pages: secrets made once, invitations
//!   accepted signed in, device cookies at sign-in, mail, the audit log in words, dates and CSV.
//! - `console_people`: confirmations before a revocation or a removal, the members page for
//!   every member, viewers invited and made (console, CLI), refused emails and weak passwords
//!   (console, links, CLI), sessions by browser, every refused card field at once, times in
//!   words, the pages' notices, error pages and scrolling tables.
//! - `console_reports`: the Reports page after real `/fragment` requests: the numbers, CSV and
//!   buckets of `admin report` for the same window, names and links, refusals, isolation.
//! - `connect`: "Connect an edge": the values, a key made once, the recipes filled in and
//!   downloaded; the live check after a served request, a `400` and a `403`; the downloaded
//!   nginx configuration and Worker run in nginx and workerd (a card to an agent only).
//! - `browser`: the console's main journeys in Chromium (Selenium), every page checked by axe-core;
//!   every page again at a phone's width (390×844: axe with target size, no sideways scroll).
//! - `hardening`: the defects a hostile-input campaign found, each with its test.
//! - `outage`: PostgreSQL stopped and restarted under a running server (a private cluster).
//! - `replica`: the reports read on a replica (a second clone with numbers of its own), and
//!   writes meeting a primary that accepts none (`503` with `Retry-After`, then writes again).
//! - `startup`: the real binary started with each mistake (database port, database, user, URL,
//!   a listen address in use, no console host for a link): stderr names cause and fix; and
//!   scripts/run.sh refusing a DATABASE_URL that cannot be used, silent when serve fails.
//! - `logging`: the operator's log at the default filter (no line per request).
//! - `metrics`: `/metrics` on its own listener, read by Prometheus's parsers (`parse_metrics.py`):
//!   every family, counters moving with requests, the two listeners kept apart.
//! - `report_mail`: scheduled reports by mail: subscriptions on a person's page, a weekly report
//!   mailed once per subscriber by three instances on one database (after a restart too, the
//!   last week only), its numbers, RFC 8058's one-click unsubscribe, forged tokens refused.
//! - `schema`: `openapi.json` against the running server, by schemathesis (from PyPI).
//! - `client`: a Python client generated from `openapi.json` (openapi-python-client, from PyPI)
//!   drives every `/v1` operation.

mod console_fixtures;
mod console_forms;
mod edge_fixtures;
mod fixtures;
mod harness;
mod pg_proxy;

mod admin_cli;
mod architecture;
mod audit;
mod auth;
mod browser;
mod cards;
mod client;
mod connect;
mod console;
mod console_access;
mod console_acting;
mod console_admin;
mod console_alerts;
mod console_cards;
mod console_factors;
mod console_flood;
mod console_people;
mod console_queries;
mod console_reports;
mod console_safety;
mod console_sites;
mod console_web;
mod console_wiring;
mod conventions;
mod counting;
mod delivery;
mod demo;
mod edge;
mod edge_chaos;
mod edge_proxy;
mod fragments;
mod hardening;
mod http_layer;
mod icon;
mod keys;
mod limits;
mod logging;
mod metrics;
mod other_routes;
mod outage;
mod refused;
mod replica;
mod report;
mod report_mail;
mod routes;
mod same_messages;
mod schema;
mod sites;
mod startup;
mod why;
