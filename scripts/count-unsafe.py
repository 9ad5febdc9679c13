#!/usr/bin/env python3
"""Counts the places `unsafe` is used in code (docs/design.md, "`unsafe` code"): each
occurrence of the keyword outside `//` comments and string literals, in crates/*/src,
test modules (`#[cfg(test)] mod tests` at a file's end) and test files left out."""
import os
import re
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates")
total, per_file = 0, {}
for top, _, files in os.walk(root):
    if "/src" not in top or "/tests" in top:
        continue
    for name in files:
        if not name.endswith(".rs") or name == "tests.rs" or name.endswith("_tests.rs"):
            continue
        path = os.path.join(top, name)
        text = open(path, encoding="utf-8").read().split("#[cfg(test)]\nmod tests")[0]
        count = 0
        for line in text.split("\n"):
            code = re.sub(r'"[^"]*"', "", line.split("//")[0])
            count += len(re.findall(r"\bunsafe\b", code))
        if count:
            per_file[os.path.relpath(path, root)] = count
            total += count
for path in sorted(per_file):
    print(f"{per_file[path]:4} {path}")
print(f"{total:4} in all")
sys.exit(0)
