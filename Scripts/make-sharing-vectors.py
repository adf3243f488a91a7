#!/usr/bin/env python3
"""Writes Fixtures/sharing/vectors.json from docs/format.md's "Sharing" section alone (Scripts/peer/share.py):
identities and their safety numbers, shared values with the keys that open them, and group texts. The Swift tests
open every value and read every identity; this script reads them back before writing."""
import base64
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer import share  # noqa: E402


def key(seed):
    return bytes((seed * 7 + i) % 256 for i in range(32))


def main():
    keys = {name: key(seed) for seed, name in enumerate(["alice", "bob", "carol"], start=1)}
    identities = []
    for name, k in keys.items():
        secret, _, _, public = share.identity(k)
        identities.append({
            "id": name, "key": base64.b64encode(k).decode(), "identity": share.identity_text(public),
            "fingerprint": share.safety_number(public), "age_identity": share.bech32_secret(secret)})
    ident = {name: share.identity(k)[3] for name, k in keys.items()}
    values = []
    for plaintext, recipients, context in [("for bob", ["bob"], ""), ("for bob and carol", ["bob", "carol"], "note"),
                                           ("", ["carol"], ""), ("x" * 65537, ["bob"], "big")]:
        text = share.seal_shared(plaintext.encode(), keys["alice"], [ident[r] for r in recipients], b"alice", 2,
                                 context.encode())
        for r in recipients:
            assert share.open_shared(text, keys[r], 2, context.encode())[0] == plaintext.encode()
        values.append({"sender": "alice", "owner": "alice", "context": context, "recipients": recipients,
                       "plaintext": plaintext, "value": text})
    group = share.make_group(keys["alice"], b"alice", bytes(range(16)), 1, b"family",
                             [(b"bob", ident["bob"]), (b"carol", ident["carol"])])
    assert share.read_group(group)[1] == 1
    out = {"identities": identities, "values": values,
           "groups": [{"creator": "alice", "name": "family", "epoch": 1, "members": ["alice", "bob", "carol"], "text": group}]}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "sharing", "vectors.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
