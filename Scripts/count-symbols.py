#!/usr/bin/env python3
"""Counts the public symbols each library product makes visible to `import PRODUCT` (issue 32): its own module
and every module it re-exports (`@_exported import` in Sources/PRODUCT/Exports.swift, followed transitively),
from `swift package dump-symbol-graph --minimum-access-level public --skip-synthesized-members`. Enum cases
and synthesized members are not counted, as the issue asks; each symbol counts once per product however many
modules re-export it.

    Scripts/count-symbols.py            one line per product, then per module
    Scripts/count-symbols.py --json     the same as JSON
"""
import glob
import json
import os
import re
import subprocess
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
products = ["SealKit", "SealKitBackup", "SealKitTransfer", "SealKitKeyring", "SealKitQR", "SealKitAudit"]


def exported(module):
    path = os.path.join(root, "Sources", module, "Exports.swift")
    if not os.path.exists(path):
        return []
    with open(path) as source:
        return re.findall(r"^@_exported import (\w+)", source.read(), re.M)


def visible_modules(product):
    seen, todo = [], [product]
    while todo:
        module = todo.pop(0)
        if module not in seen:
            seen.append(module)
            todo += exported(module)
    return seen


output = subprocess.run(
    ["swift", "package", "dump-symbol-graph", "--minimum-access-level", "public", "--skip-synthesized-members"],
    cwd=root, capture_output=True, text=True)
# It fails on the C targets (the package's C++17 flag reaches their C extraction), which have no Swift
# symbols to count: what matters is that every Swift module's graph was written, checked below.
folder = glob.glob(os.path.join(root, ".build", "*", "symbolgraph"))[0]


def symbols(module):
    if not os.path.exists(os.path.join(folder, f"{module}.symbols.json")):
        sys.exit(f"no symbol graph for {module}:\n" + output.stderr[-2000:])
    found = {}
    # The module's own graph, and its extensions of other modules' types (Module@Other.symbols.json).
    for path in glob.glob(os.path.join(folder, f"{module}.symbols.json")) + glob.glob(os.path.join(folder, f"{module}@*.symbols.json")):
        with open(path) as graph:
            for symbol in json.load(graph)["symbols"]:
                if symbol["kind"]["identifier"] == "swift.enum.case" or "::SYNTHESIZED::" in symbol["identifier"]["precise"]:
                    continue
                found[symbol["identifier"]["precise"]] = ".".join(symbol["pathComponents"])
    return found


report = {}
for product in products:
    modules = {module: symbols(module) for module in visible_modules(product)}
    union = {}
    for found in modules.values():
        union.update(found)
    report[product] = {"total": len(union), "modules": {m: len(s) for m, s in modules.items()}}
if "--json" in sys.argv:
    json.dump(report, sys.stdout, indent=2)
    print()
else:
    for product, counts in report.items():
        parts = ", ".join(f"{m} {n}" for m, n in counts["modules"].items())
        print(f"import {product}: {counts['total']} public symbols ({parts})")
