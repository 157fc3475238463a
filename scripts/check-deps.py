#!/usr/bin/env python3
"""scripts/check-deps.py: the module graph of src/ points one way.

Reads every `crate::X` path in src/ (comments left out) and draws the graph of the crate's
top-level modules (a file `src/X.rs` or a folder `src/X/`). Fails, naming the modules, when
  - two or more top-level modules depend on each other through any chain (a cycle),
  - `db` uses anything but the modules in DB_MAY_USE, or
  - ARCHITECTURE.md's layer picture (the fenced block after LAYERS_MARK) is not the graph's:
    each module on the first layer above every module it uses.
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
    problems = []
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
        print(f"check-deps: {len(graph)} top-level modules, no cycle; db uses only "
              + ", ".join(sorted(DB_MAY_USE)) + "; ARCHITECTURE.md's layers match")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
