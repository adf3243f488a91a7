#!/usr/bin/env python3
# Python: it reads the JSON symbol graphs `swift package dump-symbol-graph` writes, with check-api's reader.
"""Counts the public symbols each library product makes visible to `import PRODUCT`: its own module
and every module it re-exports (`@_exported import` in any file of Sources/PRODUCT, followed transitively),
from `swift package dump-symbol-graph --minimum-access-level public --skip-synthesized-members`. Enum cases
and synthesized members are not counted, as the issue asks; each symbol counts once per product however many
modules re-export it. The graph reading is Scripts/lib/symbolgraph.py's, shared with Scripts/check-api.

    Scripts/count-symbols.py            one line per product, then per module
    Scripts/count-symbols.py --json     the same as JSON
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import symbolgraph  # noqa: E402

graphs = symbolgraph.Graphs()
report = {}
for product in symbolgraph.library_products():
    modules = graphs.product(product)
    union = {}
    for module, found in modules.items():
        # Counted as before enum cases entered the graphs' reading, so counts stay comparable across releases: declarations, not cases.
        modules[module] = {precise: symbol for precise, symbol in found.items() if not symbolgraph.is_case(symbol)}
        union.update(modules[module])
    report[product] = {"total": len(union), "modules": {m: len(s) for m, s in modules.items()}}
if "--json" in sys.argv:
    json.dump(report, sys.stdout, indent=2)
    print()
else:
    for product, counts in report.items():
        parts = ", ".join(f"{m} {n}" for m, n in counts["modules"].items())
        print(f"import {product}: {counts['total']} public symbols ({parts})")
