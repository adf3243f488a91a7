#!/usr/bin/env python3
# Python: it reads `swift package describe --type json`; a driver of the package manager, not library code.
"""Checks what each library product pulls in, so an app pays only for what it imports: `SealKit` needs libsodium and swift-system alone, and
the other products add only what they say. Reads `swift package describe --type json`; run by Scripts/test.
"""
import json
import subprocess
import sys

description = json.loads(subprocess.run(["swift", "package", "describe", "--type", "json"], capture_output=True, check=True, text=True).stdout)
targets = {t["name"]: t for t in description["targets"]}


def closure(name):
    seen, todo, products = set(), [name], set()
    while todo:
        target = targets[todo.pop()]
        if target["name"] in seen:
            continue
        seen.add(target["name"])
        todo += target.get("target_dependencies", [])
        products |= set(target.get("product_dependencies", []))
    return seen, products


allowed = {
    "SealKit": ({"SealKit", "CSodium"}, {"SystemPackage"}),
    # Backups need what SealKit needs and nothing more: no swift-nio, no QR libraries.
    "SealKitBackup": ({"SealKitBackup", "SealKit", "CSodium"}, {"SystemPackage"}),
    # Transfers no longer need backups: the code text they share is SealKit's.
    "SealKitTransfer": ({"SealKitTransfer", "SealKit", "CSodium"}, {"SystemPackage", "NIOConcurrencyHelpers", "NIOCore", "NIOPosix",
                                                                 "NIOHTTP1", "NIOWebSocket"}),
}
failed = False
for product, (allowed_targets, allowed_products) in allowed.items():
    seen, products = closure(product)
    extra_targets, extra_products = seen - allowed_targets, products - allowed_products
    if extra_targets or extra_products:
        print(f"{product} pulls in {sorted(extra_targets | extra_products)}: it must need libsodium and swift-system alone", file=sys.stderr)
        failed = True
    system = sorted(t for t in seen if targets[t]["type"] == "system-target")
    print(f"{product}: targets {sorted(seen)}; system libraries {system}; packages {sorted(products)}")
for product in ("SealKitKeyring", "SealKitQR", "SealKitAudit", "SealKitTPM"):
    seen, products = closure(product)
    print(f"{product}: system libraries {sorted(t for t in seen if targets[t]['type'] == 'system-target')}; packages {sorted(products)}")
sys.exit(1 if failed else 0)
