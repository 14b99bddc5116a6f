#!/usr/bin/env python3
"""Checks that no Rust module imports another that imports it back, in every crate of the
workspace (CI runs it). A module is a source file; an import is any path through `crate::`,
`super::`, `self::` or a child module, in a `use` declaration (re-exports included) or inline.
Prints each circle with the names that tie it, and exits 1 if there is one.

    python3 scripts/check-modules.py [CRATE_DIR ...]   (default: every workspace member)
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def members():
    text = (ROOT / "Cargo.toml").read_text()
    block = re.search(r"members\s*=\s*\[(.*?)\]", text, re.S).group(1)
    return [ROOT / m for m in re.findall(r'"([^"]+)"', block)]


def strip(source):
    """Source without comments, string and char literals (their contents never hold paths)."""
    out, i, n = [], 0, len(source)
    while i < n:
        c = source[i]
        if source.startswith("//", i):
            j = source.find("\n", i)
            i = n if j < 0 else j
        elif source.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if source.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif source.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == "r" and re.match(r'r#*"', source[i:]) and not re.match(r"\w", source[i - 1 : i] or " "):
            hashes = re.match(r'r(#*)"', source[i:]).group(1)
            end = source.find('"' + hashes, i + 2 + len(hashes))
            out.append('""')
            i = n if end < 0 else end + 1 + len(hashes)
        elif c == '"':
            i += 1
            while i < n and source[i] != '"':
                i += 2 if source[i] == "\\" else 1
            out.append('""')
            i += 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", source[i:]):
            i += len(re.match(r"'(\\.|[^\\'])'", source[i:]).group(0))
            out.append("' '")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def crate_modules(crate):
    """Module path (tuple) -> file, for the library (src/lib.rs) and its submodules."""
    src = crate / "src"
    if not (src / "lib.rs").exists():
        return {}
    modules = {(): src / "lib.rs"}

    def walk(path, file, directory):
        for name in re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", strip(file.read_text()), re.M):
            for candidate, child_dir in (
                (directory / f"{name}.rs", directory / name),
                (directory / name / "mod.rs", directory / name),
            ):
                if candidate.exists():
                    modules[path + (name,)] = candidate
                    walk(path + (name,), candidate, child_dir)
                    break

    walk((), src / "lib.rs", src)
    return modules


def expand_use(tree):
    """`a::{b, c::{d, e}}` -> [a::b, a::c::d, a::c::e] (aliases and globs dropped)."""
    tree = re.sub(r"\s+", "", tree)
    tree = re.sub(r"\bas\w+", "", tree.replace("as", " as ")) if " as " in tree else tree
    out = []

    def rec(prefix, text):
        if "{" not in text:
            for part in filter(None, text.split(",")):
                out.append(prefix + part)
            return
        i = text.index("{")
        head = text[:i]
        depth, j = 0, i
        while j < len(text):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                break
            j += 1
        inner, rest = text[i + 1 : j], text[j + 1 :].lstrip(",")
        parts, depth, start = [], 0, 0
        for k, ch in enumerate(inner):
            depth += {"{": 1, "}": -1}.get(ch, 0)
            if ch == "," and depth == 0:
                parts.append(inner[start:k])
                start = k + 1
        parts.append(inner[start:])
        before, _, last = head.rpartition(",")
        if before:
            rec(prefix, before)
        for p in filter(None, parts):
            rec(prefix + last, p)
        if rest:
            rec(prefix, rest)

    rec("", tree)
    return [re.sub(r"\s+as\s+\w+$", "", p) for p in out]


def imports(modules, path, file):
    """(imported module path, name, re-exported) triples of one file."""
    text = strip(file.read_text())
    found = []
    # Inline modules (`mod tests { ... }`) shift what `super` and `self` mean inside them.
    spans = []
    for m in re.finditer(r"\bmod\s+(\w+)\s*\{", text):
        depth, j = 0, m.end() - 1
        while j < len(text):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                break
            j += 1
        spans.append((m.end(), j, m.group(1)))

    def scope(pos):
        inner = tuple(name for start, end, name in spans if start <= pos <= end)
        return path + inner

    def resolve(segments, at):
        here = scope(at)
        first = segments[0]
        if first == "crate":
            base, rest = (), segments[1:]
        elif first in ("super", "self"):
            base = here
            rest = segments
            while rest and rest[0] in ("super", "self"):
                if rest[0] == "super":
                    base = base[:-1]
                rest = rest[1:]
        elif here + (first,) in modules:
            base, rest = here, segments
        else:
            return None
        target = base
        for seg in rest:
            if target + (seg,) in modules:
                target = target + (seg,)
            else:
                break
        # Inline modules live in their file: map back to the longest file-backed prefix.
        while target not in modules:
            target = target[:-1]
        name = rest[-1] if rest else first
        return target, name

    uses = []
    for m in re.finditer(r"(\bpub(?:\([^)]*\))?\s+)?\buse\s+([^;]+);", text):
        uses.append((m.start(), m.end()))
        for p in expand_use(m.group(2)):
            segs = [s for s in p.split("::") if s and s != "*"]
            if segs:
                r = resolve(segs, m.start())
                if r:
                    found.append(r + (bool(m.group(1)),))
    # Inline paths: through `crate`, `super`, `self`, or a child module of the current scope
    # (`resolve` drops the others: external crates, types, enums).
    for m in re.finditer(r"(?<![\w:])(\w+(?:::\w+)+)", text):
        if any(a <= m.start() < b for a, b in uses):
            continue
        r = resolve(m.group(1).split("::"), m.start())
        if r:
            found.append(r + (False,))
    return found


def reexports(modules):
    """(module, name) -> (module, name) for every `pub use` of a module: where a name imported
    through a facade really comes from."""
    table = {}
    for path, f in modules.items():
        for target, name, public in imports(modules, path, f):
            if public and target != path:
                table[(path, name)] = (target, name)
    return table


def source_of(table, target, name):
    seen = set()
    while (target, name) in table and (target, name) not in seen:
        seen.add((target, name))
        target, name = table[(target, name)]
    return target


def circles(crate):
    modules = crate_modules(crate)
    files = {path: f for path, f in modules.items()}
    table = reexports(modules)
    edges = {}
    for path, f in files.items():
        body = re.sub(r"\buse\s+[^;]+;", "", strip(f.read_text()))
        for target, name, public in imports(modules, path, f):
            # A facade's re-export of its own descendants' items declares them, it does not
            # use them (unless its own code names them too); a name imported through a facade
            # comes from where it is defined.
            if public and target[: len(path)] == path and not re.search(rf"\b{name}\b", body):
                continue
            target = source_of(table, target, name)
            if target != path:
                edges.setdefault(path, {}).setdefault(target, set()).add(name)
    # Tarjan's strongly connected components.
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def connect(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(comp)

    sys.setrecursionlimit(10000)
    for v in files:
        if v not in index:
            connect(v)
    rel = lambda p: files[p].relative_to(ROOT)
    report = []
    for comp in comps:
        members_ = set(comp)
        lines = [f"circle of {len(comp)} modules:"]
        for a in sorted(comp):
            for b, names in sorted(edges.get(a, {}).items()):
                if b in members_:
                    lines.append(f"  {rel(a)} -> {rel(b)}: {', '.join(sorted(names))}")
        report.append("\n".join(lines))
    return len(files), report


def main():
    crates = [Path(a).resolve() for a in sys.argv[1:]] or members()
    failed = False
    for crate in crates:
        count, report = circles(crate)
        status = "no circles" if not report else f"{len(report)} circle(s)"
        print(f"{crate.relative_to(ROOT)}: {count} modules, {status}")
        for r in report:
            print(r)
        failed |= bool(report)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
