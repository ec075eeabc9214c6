#!/usr/bin/env python3
"""Fails if modules of a crate import each other in a circle.

    scripts/module_cycles.py crates/*/src

For each crate source folder given, every file is a module; a module depends on another when
its code (not its comments or its `mod tests`) names it through `crate::`, `super::` or
`self::`. Prints each circle (strongly connected set of modules) with its edges and exits 1 if
there is any. Submodules are not counted as depending on their parents or children: a parent
re-exporting its children, and children using their parent's items, is how a module tree
works.
"""
import os
import re
import sys


def modules(src):
    """Maps module paths (`tree::pipeline::batch`) to files."""
    found = {}
    for root, _, files in os.walk(src):
        for f in files:
            if f.endswith(".rs"):
                path = os.path.join(root, f)
                parts = os.path.relpath(path, src)[:-3].split(os.sep)
                if parts[-1] in ("mod", "lib", "main"):
                    parts = parts[:-1]
                found["::".join(parts)] = path
    return found


def resolve(mods, current, path):
    """The module a `crate::`/`super::`/`self::` path in `current` lands in, or None."""
    parts = path.split("::")
    if parts[0] == "crate":
        base, parts = [], parts[1:]
    elif parts[0] in ("super", "self"):
        base = current.split("::") if current else []
        while parts and parts[0] in ("super", "self"):
            if parts[0] == "super":
                base = base[:-1]
            parts = parts[1:]
    else:
        return None
    for i in range(len(parts), -1, -1):
        candidate = "::".join(base + parts[:i])
        if candidate in mods:
            return candidate
    return None


def related(a, b):
    return a == b or a.startswith(b + "::") or b.startswith(a + "::") or not a or not b


def edges_of(mods):
    edges = {m: set() for m in mods}
    for m, path in mods.items():
        text = open(path, encoding="utf-8").read()
        text = re.sub(r"#\[cfg\(test\)\]\s*mod tests\s*\{.*", "", text, flags=re.S)
        text = re.sub(r"//.*", "", text)
        paths = re.findall(r"\b((?:crate|super|self)(?:::\w+)+)", text)
        for head, group in re.findall(r"\buse\s+((?:crate|super|self)(?:::\w+)*)::\{([^;]*)\}", text):
            paths += [head + "::" + g.strip().split(" as ")[0].split("::")[0]
                      for g in group.split(",") if g.strip() and g.strip() != "self"]
        for p in paths:
            target = resolve(mods, m, p)
            if target is not None and not related(m, target):
                edges[m].add(target)
    return edges


def circles(edges):
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def main():
    bad = False
    for src in sys.argv[1:]:
        edges = edges_of(modules(src))
        found = circles(edges)
        for component in found:
            bad = True
            print(f"{src}: modules in a circle: {', '.join(component)}")
            for a in component:
                for b in sorted(edges[a]):
                    if b in component:
                        print(f"    {a} uses {b}")
        if not found:
            print(f"{src}: no module circles")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
