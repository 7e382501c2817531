#!/usr/bin/env python3
"""Checks that a package's sources include only what its layer may use.

The table lives in tools/layers.bzl; layering_test() passes this package's
row. Each quoted #include of one of our packages must name a package the
row allows: library files get `deps`, test files also `test_deps`.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def package_of(path, packages):
    """The longest known package that holds `path`, or None (external)."""
    parts = path.split("/")[:-1]
    while parts:
        candidate = "/".join(parts)
        if candidate in packages:
            return candidate
        parts.pop()
    return None


def kind_of(name):
    if name.endswith("_test.cc") or "test_util" in name or name.endswith("_fuzzer.cc"):
        return "test"
    return "lib"


def check(package, src_dir, deps, test_deps, packages):
    problems = []
    names = [n for n in sorted(os.listdir(src_dir)) if n.endswith((".cc", ".h"))]
    if not names:
        return [f"{package}: no C++ sources to check in {src_dir}: an empty check proves nothing"]
    for name in names:
        kind = kind_of(name)
        with open(os.path.join(src_dir, name), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                header = m.group(1)
                target = package_of(header, packages)
                if target is None or target == package:
                    continue
                ok = target in (deps + test_deps if kind == "test" else deps)
                if not ok:
                    problems.append(f"{package}/{name}:{number}: {kind} file includes {header} "
                                    f"({target} is not below {package} in tools/layers.bzl)")
    return problems


def main(argv):
    # argv: package src_dir deps test_deps packages (lists comma-separated)
    package, src_dir = argv[1], argv[2]
    split = lambda s: [x for x in s.split(",") if x and x != "-"]
    deps, test_deps, packages = (split(a) for a in argv[3:6])
    problems = check(package, src_dir, deps, test_deps, set(packages))
    for p in problems:
        print(p)
    print(f"{package}: {'ok' if not problems else str(len(problems)) + ' layering violation(s)'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
