#!/usr/bin/env python3
"""scripts/check-deps.py: the module graph of src/ points one way, SQL and `may` stay home.

Reads every `crate::X` path in src/ (comments left out) and draws the graph of the crate's
top-level modules (a file `src/X.rs` or a folder `src/X/`). Fails, naming the modules, when
  - two or more top-level modules depend on each other through any chain (a cycle),
  - `db` uses anything but the modules in DB_MAY_USE, or
  - ARCHITECTURE.md's layer picture (the fenced block after LAYERS_MARK) is not the graph's:
    each module on the first layer above every module it uses.
  - two or more files of one top-level folder depend on each other through any chain (a cycle
    inside a module: `super::x`, `crate::<module>::x`, and in `mod.rs` its children's names;
    `mod.rs` itself counts in ROOT_IN_CYCLES only), or
Fails, naming file:line, when
  - a file of WRITES_THROUGH_OPS (console/, admin/) calls a function of db that writes (one
    whose SQL, or a function of its file it calls, inserts, updates or deletes): their writes
    go through ops, which checks and audits them, or
  - a file of READS_THROUGH_OPS (console/) calls any function of db, or brings a db module or
    function into scope with `use` (db's row types it may name): its reads go through ops too, or
  - a file outside src/db/ calls a PostgreSQL client's query methods (SQL_CALL) or holds a
    string literal that reads as SQL (SQL_TEXT), or
  - a module names a part of `may` that MAY_ALLOWED does not give it (crate roots: none), or
  - a function of ops/ opens a transaction and records no audit entry in it (AUDIT_CALL,
    directly or through a function of its file that does; UNAUDITED_ALLOWED aside), or
  - a file holds what ABSENCES keeps out of it (async code anywhere; a database client or a db
    function called on delivery's request path; a cookie read by /v1; a thread started outside
    THREAD_HOMES).
Fails, naming the line of Cargo.toml, when a dependency is an async runtime or `may` is built
with its io time-outs or io cancelling (MAY_FEATURES_REFUSED); and, naming the module, when
ARCHITECTURE.md's code map (the section after CODE_MAP_MARK) leaves out a top-level module or
names one that does not exist.
Every run first checks the file:line checks and the cycle finder on small samples of their own (`self_test`).
scripts/test.sh runs this check; `-v` prints the graph, `--layers` the picture.
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
ARCHITECTURE = ROOT / "ARCHITECTURE.md"
LAYERS_MARK = "<!-- check-deps.py --layers -->"
# The data-access layer knows only validated values and ids: what calls it, it never calls.
DB_MAY_USE = {"domain", "ids"}

# SQL lives in src/db/ (and the migrations of sql/), nowhere else in src/.
SQL_HOME = "db"
SQL_CALL = re.compile(
    r"\.(query|query_one|query_opt|query_raw|query_typed|execute|execute_raw|prepare"
    r"|prepare_typed|batch_execute|simple_query|copy_in|copy_out)\s*\(\s*[^)\s]"
)
SQL_TEXT = re.compile(
    r"\b(SELECT\s|INSERT\s+INTO\b|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b"
    r"|(CREATE|DROP|ALTER)\s+(TABLE|INDEX|DATABASE|TRIGGER|FUNCTION|SCHEMA)\b|TRUNCATE\s"
    r"|(UN)?LISTEN\s+[\w{]|NOTIFY\s+[\w{]|SET\s+(TIME\s+ZONE|statement_timeout|search_path|LOCAL)\b)"
)
# The modules whose writes go through `ops` (checked, and recorded in the audit log).
WRITES_THROUGH_OPS = ("console", "admin")
# The folders whose mod.rs takes part in the check of cycles inside a module: nothing of
# console/ uses its mod.rs (the runner of the page table), which uses every page.
ROOT_IN_CYCLES = {"console"}
# The modules that read through `ops` as well: they call no function of db at all, and name
# only db's row types (the values ops hands them).
READS_THROUGH_OPS = ("console",)
DB_USE = re.compile(r"\buse\s+crate::db::([^;]*);")
DB_CALL = re.compile(r"(?<![\w:])(?:crate::)?db::([a-z_][a-z0-9_]*)::([a-z_][a-z0-9_]*)\s*(?:::<[^>]*>)?\(")
SQL_WRITE = re.compile(r"\b(INSERT\s+INTO|UPDATE\s+\w+(\s+\w+)?\s+SET|DELETE\s+FROM|TRUNCATE)\b")
FN_HEAD = re.compile(r"^(?:pub(?:\([a-z]+\))?\s+)?fn\s+([a-z_][a-z0-9_]*)", re.M)
CALL = re.compile(r"(?<![\w:])([a-z_][a-z0-9_]*)\s*(?:::<[^>]*>)?\(")
TESTS = re.compile(r"^#\[cfg\(test\)\]\s*mod\s+tests\b", re.M)

# Which parts of `may` (the name after `may::`) each top-level module may name: its io and its
# runtime's settings only http/, its coroutines and channels also edge/ and blocking.
MAY_ALLOWED = {
    "http": None,
    "edge": {"go", "coroutine", "sync"},
    "blocking": {"go", "coroutine", "sync"},
}
# The files that start OS threads: the stoppable handle every other thread runs in, the
# blocking pool, the password hashers, the sockets' watchdog and the edge's budget alarm.
THREAD_HOMES = {"background.rs", "blocking.rs", "password.rs", "http/watchdog.rs", "edge/alarm.rs"}
# What stays out of which files, over the code without comments (texts kept): (what, which
# files of src/ by path, the pattern, why). ARCHITECTURE.md's invariants name these.
ABSENCES = [
    ("async code", lambda path: True, re.compile(r"\basync\s+(fn|move\b|\{)|\.await\b"),
     "no async code: the service is sync, on may coroutines and threads of ours"),
    ("the database on delivery's request path",
     lambda path: path.startswith("delivery/") and path != "delivery/cache.rs",
     re.compile(r"\bpostgres::|\bpool::|\bdb::[a-z_]+::[a-z_]+\s*\("),
     "only delivery::cache reads the database (its refresher, the reload after a write); "
     "a /fragment request reads the snapshot"),
    ("a cookie read by /v1", lambda path: path.startswith("api/") or path == "auth.rs",
     re.compile(r"(?i)cookie"), "/v1 authenticates by its Authorization header alone"),
    ("a thread started", lambda path: path not in THREAD_HOMES,
     re.compile(r"\bthread::(spawn|Builder)\b"),
     "a thread of ours beside the service runs in a background::Background, which stops and "
     "joins it; the pools and clocks that start their own are " + ", ".join(sorted(THREAD_HOMES))),
]
# Every transaction ops opens writes, and every write is recorded in the audit log in its
# transaction: a function of ops/ that opens one calls AUDIT_CALL, itself or through a function
# of its file. `made_once` runs the create it is given, which records its own entry.
AUDIT_CALL = re.compile(r"\baudit::record(_by|_about_person)?\s*\(")
# The alerts' evaluation writes their state (started, ended) and its claim of the minute:
# nobody's change, nothing for the audit log.
UNAUDITED_ALLOWED = {"once.rs": {"made_once"}, "alerts.rs": {"evaluate"}}
CARGO_TOML = ROOT / "Cargo.toml"
ASYNC_RUNTIMES = {"tokio", "async-std", "smol", "async-executor", "actix-rt"}
MAY_FEATURES_REFUSED = {"io_timeout", "io_cancel"}
CODE_MAP_MARK = "## Code map"
MAY_PATH = re.compile(r"\bmay::(\{|[a-z_][a-z0-9_]*)")
# Comments, then texts (raw strings first), then characters ('"' is not a string).
LEXEME = re.compile(
    r'(?P<comment>//[^\n]*|/\*.*?\*/)'
    r'|(?P<text>b?r(?P<hashes>#*)".*?"(?P=hashes)|b?"(?:\\.|[^"\\])*")'
    r"|(?P<char>b?'(?:\\.|[^\\'\n])')",
    re.S,
)

LINE_COMMENT = re.compile(r"//.*")
BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\])*"')
CRATE_PATH = re.compile(r"\bcrate::(\{|[a-z_][a-z0-9_]*)")


def top_level_modules():
    modules = {}
    for entry in SRC.iterdir():
        if entry.is_dir():
            modules[entry.name] = sorted(entry.rglob("*.rs"))
        elif entry.suffix == ".rs" and entry.stem not in ("lib", "main"):
            modules[entry.stem] = [entry]
    return modules


def code_of(path):
    text = path.read_text()
    text = BLOCK_COMMENT.sub("", text)
    text = STRING.sub('""', text)
    return LINE_COMMENT.sub("", text)


def group_heads(code, start):
    """The first names of the paths in the `{…}` group that opens at `start`."""
    depth, names, expecting = 0, [], True
    for match in re.finditer(r"[{},]|[A-Za-z_][A-Za-z0-9_]*", code[start:]):
        token = match.group()
        if token == "{":
            depth += 1
            expecting = depth == 1
        elif token == "}":
            depth -= 1
            if depth == 0:
                return names
        elif token == ",":
            expecting = depth == 1
        elif expecting:
            names.append(token)
            expecting = False
    return names


def uses_of(files):
    used = set()
    for path in files:
        code = code_of(path)
        for match in CRATE_PATH.finditer(code):
            if match.group(1) == "{":
                used.update(group_heads(code, match.start(1)))
            else:
                used.add(match.group(1))
    return used


def blanked(text, start, end):
    """`text[start:end]` as spaces, its line breaks kept: offsets and lines stay where they were."""
    return re.sub(r"[^\n]", " ", text[start:end])


def lexed(text):
    """The code without comments, texts and characters (blanked), and the texts with their offsets."""
    code, texts, at = [], [], 0
    for match in LEXEME.finditer(text):
        code.append(text[at:match.start()])
        code.append(blanked(text, match.start(), match.end()))
        if match.group("text"):
            texts.append((match.start(), match.group("text")))
        at = match.end()
    code.append(text[at:])
    return "".join(code), texts


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def sql_problems(name, text):
    """Where a file outside src/db/ calls a query method or holds SQL text."""
    code, texts = lexed(text)
    found = [(m.start(), f"calls `{m.group(1)}`") for m in SQL_CALL.finditer(code)]
    found += [(offset, f"holds the SQL text {literal.splitlines()[0][:40]!r}")
              for offset, literal in texts if SQL_TEXT.search(literal)]
    return [f"{name}:{line_of(text, offset)}: {what}: SQL lives only in src/{SQL_HOME}/ "
            "(a function there, taking domain types)" for offset, what in sorted(found)]


def may_problems(name, module, text):
    """Where a file names a part of `may` its module may not (`module` None: a crate root)."""
    allowed = MAY_ALLOWED.get(module, set())
    if allowed is None:
        return []
    code, _ = lexed(text)
    problems = []
    for match in MAY_PATH.finditer(code):
        parts = (group_heads(code, match.start(1)) if match.group(1) == "{"
                 else [match.group(1)])
        for part in parts:
            if part not in allowed:
                problems.append(
                    f"{name}:{line_of(text, match.start())}: names `may::{part}`: may's io and "
                    "settings are named only in http/; edge/ and blocking may name may::"
                    + ", may::".join(sorted(MAY_ALLOWED["edge"])) + ", other modules no part")
    return problems


def placement_problems():
    """SQL outside src/db/, `may` outside its modules, db writes outside ops, over src/."""
    problems, writes = [], db_writes()
    for path in sorted(SRC.rglob("*.rs")):
        relative = path.relative_to(SRC)
        name = f"src/{relative}"
        module = relative.parts[0].removesuffix(".rs")
        text = path.read_text()
        if module != SQL_HOME:
            problems += sql_problems(name, text)
        crate_root = len(relative.parts) == 1 and module in ("lib", "main")
        problems += may_problems(name, None if crate_root else module, text)
        if module in WRITES_THROUGH_OPS:
            problems += write_problems(name, text, writes)
        if module in READS_THROUGH_OPS:
            problems += read_problems(name, text)
        problems += absence_problems(str(relative), text)
        if module == "ops":
            problems += audit_problems(str(relative.relative_to("ops")), text)
    return problems


def without_tests(text):
    """The file without its `#[cfg(test)] mod tests` (kept last, by habit): its `super` is the file."""
    found = TESTS.search(text)
    return text[:found.start()] if found else text


def writing_functions(text):
    """The functions of a db file that write: whose SQL inserts, updates or deletes, or that call
    one of their file that does."""
    code, texts = lexed(without_tests(text))
    heads = list(FN_HEAD.finditer(code))
    bodies = {}
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(code)
        sql = " ".join(t for at, t in texts if head.start() <= at < end)
        calls = {m.group(1) for m in CALL.finditer(code[head.end():end])}
        bodies[head.group(1)] = (bool(SQL_WRITE.search(sql)), calls)
    writes = {name for name, (direct, _) in bodies.items() if direct}
    while True:
        more = {name for name, (_, calls) in bodies.items() if calls & writes} - writes
        if not more:
            return writes
        writes |= more


def db_aliases(code):
    """The names under which a file reaches db modules: `use crate::db::{people, x as y}`,
    `use crate::db::cards::{self as stored}`, `use crate::db;` (then `db::m::f`)."""
    aliases = {}
    for use in re.finditer(r"\buse\s+crate::db::([^;]*);", code):
        path = use.group(1).strip()
        head = re.match(r"([a-z_][a-z0-9_]*)\s*(?:as\s+([a-z_][a-z0-9_]*))?\s*(::\s*\{(.*)\})?$",
                        path, re.S)
        if path.startswith("{"):
            for item in path.strip("{}").split(","):
                parts = item.split()
                if parts and parts[0] != "self":
                    aliases[parts[-1] if "as" in parts else parts[0].split("::")[0]] = \
                        parts[0].split("::")[0]
        elif head:
            module = head.group(1)
            if head.group(3):
                for item in head.group(4).split(","):
                    parts = item.split()
                    if parts and parts[0] == "self":
                        aliases[parts[-1] if "as" in parts else module] = module
            else:
                aliases[head.group(2) or module] = module
    return aliases


def write_problems(name, text, writes):
    """Where a file calls a db function that writes (`writes`: db module -> its functions)."""
    code, _ = lexed(without_tests(text))
    aliases = db_aliases(code)
    problems = []
    call = re.compile(r"(?<![\w:])(?:crate::)?(db::)?([a-z_][a-z0-9_]*)::([a-z_][a-z0-9_]*)\s*\(")
    for match in call.finditer(code):
        module = match.group(2) if match.group(1) else aliases.get(match.group(2))
        if module in writes and match.group(3) in writes[module]:
            problems.append(
                f"{name}:{line_of(text, match.start())}: calls db::{module}::{match.group(3)}, "
                "which writes: console/ and admin/ write through ops (checked and audited)")
    return problems


def read_problems(name, text):
    """Where a file calls a db function, or brings a db module or function into scope (any
    name `use crate::db::…` brings but a type's: a row type starts with a capital)."""
    code, _ = lexed(without_tests(text))
    found = [(m.start(), f"calls db::{m.group(1)}::{m.group(2)}") for m in DB_CALL.finditer(code)]
    for use in DB_USE.finditer(code):
        leaves = [item.split()[0] for item in re.split(r"[{},]", use.group(1))
                  if item.strip() and not item.strip().endswith("::")]
        names = [leaf.split("::")[-1] for leaf in leaves]
        found += [(use.start(), f"brings db's `{n}` into scope") for n in names
                  if not n[:1].isupper()]
    return [f"{name}:{line_of(text, at)}: {what}: console/ reads through ops as it writes "
            "(it names only db's row types)" for at, what in sorted(found)]


def db_writes():
    return {path.stem: writing_functions(path.read_text())
            for path in sorted((SRC / SQL_HOME).glob("*.rs"))}


def module_edges(files):
    """The graph of the files of one top-level folder: `mod` is its mod.rs."""
    names = {path.stem for path in files}
    graph = {}
    for path in files:
        code, _ = lexed(without_tests(path.read_text()))
        node, used = path.stem, set()
        for match in re.finditer(r"\b(?:super|crate::" + path.parent.name + r")::(\{|[a-z_]\w*)", code):
            heads = (group_heads(code, match.start(1)) if match.group(1) == "{"
                     else [match.group(1)])
            used.update(head if head in names else "mod" for head in heads)
        if node == "mod":
            used.update(m.group(1) for m in re.finditer(r"(?<![\w:])([a-z_]\w*)::", code)
                        if m.group(1) in names)
        graph[node] = used - {node, "self"}
    return graph


def inner_cycle_problems(modules):
    """Cycles among the files of each folder; its mod.rs counts only in ROOT_IN_CYCLES (elsewhere
    a child may use what its mod.rs declares, as Rust modules commonly share)."""
    problems = []
    for module, files in sorted(modules.items()):
        if len(files) < 2:
            continue
        graph = module_edges(files)
        if module not in ROOT_IN_CYCLES:
            graph = {node: used - {"mod"} for node, used in graph.items() if node != "mod"}
        for component in cycles(graph):
            edges = [f"{a} -> {b}" for a in component for b in sorted(graph[a]) if b in component]
            problems.append(f"cycle inside {module}/ among " + ", ".join(component) + ": "
                            + "; ".join(edges))
    return problems


def without_comments(text):
    """The text with its comments blanked (texts kept), offsets and lines where they were."""
    out, at = [], 0
    for match in LEXEME.finditer(text):
        out.append(text[at:match.start()])
        out.append(blanked(text, match.start(), match.end()) if match.group("comment")
                   else match.group())
        at = match.end()
    return "".join(out) + text[at:]


def audit_problems(name, text):
    """Where a function of an ops file (`name` relative to src/ops/) opens a transaction that
    records no audit entry."""
    code, _ = lexed(without_tests(text))
    heads = list(FN_HEAD.finditer(code))
    bodies = {}
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(code)
        body = code[head.end():end]
        bodies[head.group(1)] = (head.start(), ".transaction()" in body,
                                 bool(AUDIT_CALL.search(body)),
                                 {m.group(1) for m in CALL.finditer(body)})
    records = {fn for fn, (_, _, direct, _) in bodies.items() if direct}
    while True:
        more = {fn for fn, (_, _, _, calls) in bodies.items() if calls & records} - records
        if not more:
            break
        records |= more
    allowed = UNAUDITED_ALLOWED.get(name, set())
    return [f"src/ops/{name}:{line_of(text, at)}: {fn} opens a transaction and records no audit "
            "entry in it (audit::record): every write of ops is in the audit log"
            for fn, (at, opens, _, _) in bodies.items()
            if opens and fn not in records and fn not in allowed]


def absence_problems(name, text):
    """Where a file of src/ (`name` relative to it) holds what ABSENCES keeps out of it."""
    code = without_comments(without_tests(text))
    return [f"src/{name}:{line_of(text, m.start())}: {what}: {why}"
            for what, applies, pattern, why in ABSENCES if applies(name)
            for m in pattern.finditer(code)]


def cargo_problems(text):
    """Async runtimes among the dependencies, `may` with io time-outs or cancelling."""
    problems, section = [], None
    for number, line in enumerate(text.splitlines(), 1):
        header = re.match(r"\s*\[([^\]]+)\]", line)
        if header:
            section = header.group(1)
            continue
        entry = re.match(r"\s*([A-Za-z0-9_-]+)\s*=(.*)", line)
        if not entry or section not in ("dependencies", "dev-dependencies"):
            continue
        crate, spec = entry.groups()
        if crate in ASYNC_RUNTIMES:
            problems.append(f"Cargo.toml:{number}: {crate}: no async runtime of ours")
        if crate == "may" and section == "dependencies":
            refused = sorted(f for f in MAY_FEATURES_REFUSED if f'"{f}"' in spec)
            if refused or "default-features = false" not in spec:
                problems.append(f"Cargo.toml:{number}: may without default-features and "
                                f"without {', '.join(sorted(MAY_FEATURES_REFUSED))}: no io "
                                "time-out or cancel path exists (deadlines are threads of ours)")
    return problems


def code_map_problems(modules, text):
    """Top-level modules the code map leaves out, and names it gives no module has."""
    if CODE_MAP_MARK not in text:
        return [f"ARCHITECTURE.md has no section {CODE_MAP_MARK!r}"]
    section = text.split(CODE_MAP_MARK, 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"^\| `([a-z_]+)/?`", section, re.M))
    return ([f"ARCHITECTURE.md's code map has no line for the module {m}"
             for m in sorted(set(modules) - named)]
            + [f"ARCHITECTURE.md's code map names {m}, which is no module of src/"
               for m in sorted(named - set(modules))])


def self_test():
    """The placement checks on samples: what each must find, and what it must let pass."""
    sample = "\n".join([
        'let url = "https://x.example"; // SELECT in a comment',
        'db.batch_execute(&format!("LISTEN {CHANNEL}"))?;',
        "let quote = '\"'; let rows = db.query(\"SELECT id FROM orgs\", &[])?;",
        'let q = request.query(); /* DELETE FROM t */',
        'let raw = r#"UPDATE orgs SET name = $1"#;',
        "use may::{net::TcpStream, sync::mpsc}; may::go!(|| ());",
    ])

    def lines(problems):
        return [int(problem.split(":")[1]) for problem in problems]

    db_file = "\n".join([
        'pub fn find(db: &mut C) -> R { db.query("SELECT 1 FROM t FOR UPDATE", &[]) }',
        'pub fn set(db: &mut C) -> R { db.execute("UPDATE persons SET a = 1", &[]) }',
        'pub fn both(db: &mut C) -> R { set(db)?; find(db) }',
        'fn gone(db: &mut C) -> R { db.execute("DELETE FROM t", &[]) }',
    ])
    writes = {"people": writing_functions(db_file), "sessions": {"end"}}
    console_file = "\n".join([
        "use crate::db::{people, sessions};",
        "use crate::db::people::{self as stored, Person};",
        "people::find(db)?; people::set(db)?;",
        "stored::both(db)?; sessions::end(db)?;",
        "crate::db::people::gone(db)?; ops::people::set(db)?;",
    ])
    reads = "\n".join([
        "use crate::db::{people, sessions::Session};",
        "use crate::db::people::{self as stored, Person};",
        "use crate::db::orgs::{Creator, TokenRow}; use crate::db::cards::CardRow;",
        "let org = crate::db::orgs::find_org(db, id)?; ops::people::find(db)?;",
        "let t: db::cards::CardRow = db::cards::card::<X>(db)?; // db::x::y(db)",
        "use crate::db::people::find_person;",
    ])
    inner = cycles({"mod": {"a", "b"}, "a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"mod"}})
    absent = "\n".join([
        "async fn f() { x.await; } // async fn in a comment",
        "let c = request.header(\"Cookie\"); s.await_connected();",
        "let rows = crate::db::snapshot::load(db)?; let t: db::snapshot::Rows;",
        "use postgres::Client;",
        "let t = std::thread::spawn(f);",
    ])
    cargo = "\n".join([
        "[dependencies]",
        'may = { version = "0.3", default-features = false, features = ["io_timeout"] }',
        'tokio = "1"',
        "[dev-dependencies]",
        'may_minihttp = "0.1"',
    ])
    ops_file = "\n".join([
        "pub fn put(db: &mut C) -> R { let mut tx = db.transaction()?; entry(&mut tx)?; tx.commit() }",
        "fn entry(tx: &mut T) -> R { audit::record(tx, caller, e) }",
        "pub fn bare(db: &mut C) -> R { let mut tx = db.transaction()?; tx.commit() }",
        "pub fn made_once(db: &mut C) -> R { let mut tx = db.transaction()?; tx.commit() }",
    ])
    code_map = "## Code map\n| `db/` | x |\n| `gone` | y |\n## Next\n| `http/` | z |\n"
    expected = {
        "db writes": (sorted(writes["people"]), ["both", "gone", "set"]),
        "writes outside ops": (lines(write_problems("s.rs", console_file, writes)), [3, 4, 4, 5]),
        "reads outside ops": (lines(read_problems("s.rs", reads)), [1, 2, 4, 5, 6]),
        "cycle inside a module": (inner, [["a", "b", "c"]]),
        "SQL": (lines(sql_problems("s.rs", sample)), [2, 2, 3, 3, 5]),
        "may in edge": (lines(may_problems("s.rs", "edge", sample)), [6]),
        "may in a crate root": (lines(may_problems("s.rs", None, sample)), [6, 6, 6]),
        "may in http": (lines(may_problems("s.rs", "http", sample)), []),
        "absences in delivery": (lines(absence_problems("delivery/x.rs", absent)),
                                 [1, 1, 3, 4, 5]),
        "absences in api": (lines(absence_problems("api/x.rs", absent)), [1, 1, 2, 5]),
        "absences in delivery::cache": (lines(absence_problems("delivery/cache.rs", absent)),
                                        [1, 1, 5]),
        "absences in blocking": (lines(absence_problems("blocking.rs", absent)), [1, 1]),
        "Cargo.toml": (lines(cargo_problems(cargo)), [2, 3]),
        "unaudited transactions": (lines(audit_problems("once.rs", ops_file)), [3]),
        "code map": (code_map_problems({"db": [], "http": []}, code_map),
                     ["ARCHITECTURE.md's code map has no line for the module http",
                      "ARCHITECTURE.md's code map names gone, which is no module of src/"]),
    }
    return [f"self-test: {check} found on lines {got}, expected {want}"
            for check, (got, want) in expected.items() if got != want]


def cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layers(graph):
    """The picture: a line per layer, top first; a module sits one above its highest use."""
    depth = {}

    def depth_of(node):
        if node not in depth:
            depth[node] = 1 + max((depth_of(used) for used in graph[node]), default=-1)
        return depth[node]

    for node in graph:
        depth_of(node)
    top = max(depth.values())
    return [
        f"{level}  " + "  ".join(sorted(n for n in graph if depth[n] == level))
        for level in range(top, -1, -1)
    ]


def documented_layers():
    lines = ARCHITECTURE.read_text().splitlines()
    if LAYERS_MARK not in lines:
        return None
    start = lines.index(LAYERS_MARK) + 2  # past the mark and the opening fence
    end = lines.index("```", start)
    return lines[start:end]


def main():
    modules = top_level_modules()
    graph = {
        name: {used for used in uses_of(files) if used in modules and used != name}
        for name, files in modules.items()
    }
    problems = self_test() or (placement_problems() + inner_cycle_problems(modules)
                               + cargo_problems(CARGO_TOML.read_text())
                               + code_map_problems(modules, ARCHITECTURE.read_text()))
    for component in cycles(graph):
        edges = [
            f"{a} -> {b}" for a in component for b in sorted(graph[a]) if b in component
        ]
        problems.append("cycle among " + ", ".join(component) + ": " + "; ".join(edges))
    extra = sorted(graph.get("db", set()) - DB_MAY_USE)
    if extra:
        problems.append("db uses " + ", ".join(extra) + " (it may use only "
                        + ", ".join(sorted(DB_MAY_USE)) + ")")
    if not problems:
        picture = layers(graph)
        if "--layers" in sys.argv[1:]:
            print("\n".join(picture))
            return 0
        if documented_layers() != picture:
            problems.append("ARCHITECTURE.md's layer picture is not the module graph's; "
                            "paste the output of `scripts/check-deps.py --layers` after "
                            + LAYERS_MARK)
    if "-v" in sys.argv[1:]:
        for name in sorted(graph):
            print(f"{name} -> {', '.join(sorted(graph[name])) or '(nothing)'}")
    for problem in problems:
        print(f"check-deps: {problem}", file=sys.stderr)
    if not problems:
        print(f"check-deps: {len(graph)} top-level modules, no cycle (nor inside one); db uses only "
              + ", ".join(sorted(DB_MAY_USE)) + "; SQL only in src/db/; console/ and admin/ write through ops, console/ reads through ops; may only where allowed; "
              "no async, no database on delivery's request path, no cookie on /v1, threads only where "
              "allowed; every transaction of ops audited; "
              "ARCHITECTURE.md's layers and code map match")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
