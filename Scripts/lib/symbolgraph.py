# Python: the symbol-graph reader check-api and count-symbols share; a Swift one would be one more package to build.
"""The public API each library product makes visible to `import PRODUCT`, from the symbol graphs of
`swift package dump-symbol-graph --minimum-access-level public --skip-synthesized-members`: the product's module
and every module it re-exports (`@_exported import` in any file of Sources/MODULE, followed transitively).
Synthesized members are left out; enum cases are kept (an app's `switch` depends on them), marked by their kind
(count-symbols leaves them out of its counts). A symbol counts once per product however many modules re-export it.
Used by Scripts/count-symbols.py (the counts) and Scripts/check-api (the API-breakage check), which keys each
symbol on the name a client writes (`SealKitError.Reason.wrongPlace` through `import SealKit`), never on the
internal module that declares it.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def library_products():
    """The `.library` products of Package.swift, in its order."""
    with open(os.path.join(ROOT, "Package.swift")) as manifest:
        return re.findall(r'\.library\(\s*name:\s*"(\w+)"', manifest.read())


def exported(module):
    """The modules MODULE re-exports: `@_exported import` in any of its files (attributes such as @_spi between)."""
    found = []
    for path in sorted(glob.glob(os.path.join(ROOT, "Sources", module, "**", "*.swift"), recursive=True)):
        with open(path) as source:
            found += re.findall(r"^@_exported (?:@\w+(?:\([^)]*\))? )*import (\w+)", source.read(), re.M)
    return list(dict.fromkeys(found))


def visible_modules(product):
    """The product's module, then every module it re-exports, transitively."""
    seen, todo = [], [product]
    while todo:
        module = todo.pop(0)
        if module not in seen:
            seen.append(module)
            todo += exported(module)
    return seen


class Graphs:
    """The symbol graphs of one `swift package dump-symbol-graph` run (which builds the package first)."""

    def __init__(self):
        # A graph left by an earlier run (a module since removed, an extension since dropped) must not count.
        for folder in self._folders():
            shutil.rmtree(folder)
        self.output = subprocess.run(
            ["swift", "package", "dump-symbol-graph", "--minimum-access-level", "public", "--skip-synthesized-members"],
            cwd=ROOT, capture_output=True, text=True)
        # It fails on the C targets (the package's C++17 flag reaches their C extraction), which have no Swift
        # symbols: what matters is that every Swift module's graph was written, checked in `symbols`.
        folders = self._folders()
        if not folders:
            sys.exit("no symbol graphs were written:\n" + self.output.stderr[-2000:])
        self.folder = folders[0]

    @staticmethod
    def _folders():
        """.build/TRIPLE/symbolgraph (not the folders of other scratch paths under .build, such as coexistence)."""
        return [folder for folder in glob.glob(os.path.join(ROOT, ".build", "*", "symbolgraph"))
                if re.fullmatch(r"[\w.]+-[\w.]+-[\w.-]+", os.path.basename(os.path.dirname(folder)))]

    def symbols(self, module):
        """{precise identifier: symbol} for the module's public symbols, with its extensions of other modules'
        types (Module@Other.symbols.json). Each symbol also gets "relationships": what it conforms to or
        inherits from, by name."""
        if not os.path.exists(os.path.join(self.folder, f"{module}.symbols.json")):
            sys.exit(f"no symbol graph for {module}:\n" + self.output.stderr[-2000:])
        found, relationships = {}, []
        paths = glob.glob(os.path.join(self.folder, f"{module}.symbols.json"))
        paths += glob.glob(os.path.join(self.folder, f"{module}@*.symbols.json"))
        for path in paths:
            with open(path) as graph:
                graph = json.load(graph)
            relationships += graph.get("relationships", [])
            for symbol in graph["symbols"]:
                if "::SYNTHESIZED::" in symbol["identifier"]["precise"]:
                    continue
                found[symbol["identifier"]["precise"]] = dict(symbol, relationships=[])
        names = {precise: ".".join(symbol["pathComponents"]) for precise, symbol in found.items()}
        for relationship in relationships:
            if relationship["kind"] in ("conformsTo", "inheritsFrom") and relationship["source"] in found:
                target = names.get(relationship["target"]) or relationship.get("targetFallback") or relationship["target"]
                found[relationship["source"]]["relationships"].append(f"{relationship['kind']} {target}")
        return found

    def product(self, product):
        """{module: {precise identifier: symbol}} for every module `import PRODUCT` makes visible."""
        return {module: self.symbols(module) for module in visible_modules(product)}


def path(symbol):
    """The symbol's name as code spells it: `Vault.encrypt(plaintext:)`."""
    return ".".join(symbol["pathComponents"])


def is_case(symbol):
    """Whether the symbol is an enum case."""
    return symbol["kind"]["identifier"] == "swift.enum.case"


def kind(symbol):
    """The symbol's kind without the language: `struct`, `enum`, `enum.case`, `property`, `type.property`, ..."""
    return symbol["kind"]["identifier"].removeprefix("swift.")


def declaration(symbol):
    """The declaration as written (`func encrypt(plaintext: String) throws(VaultError) -> String`), then the
    constraints of the extension declaring it (`where ...`), then what the symbol conforms to or inherits from,
    which the declaration fragments leave out."""
    text = "".join(fragment["spelling"] for fragment in symbol.get("declarationFragments", []))
    constraints = symbol.get("swiftExtension", {}).get("constraints", [])
    if constraints:
        text += " (in an extension where " + ", ".join(
            f"{c['lhs']} {':' if c['kind'] == 'conformance' else '=='} {c['rhs']}" for c in constraints) + ")"
    if symbol["relationships"]:
        text += " [" + ", ".join(sorted(set(symbol["relationships"]))) + "]"
    return text
