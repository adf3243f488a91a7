#!/usr/bin/env python3
# Python: the shares come from python-shamir-mnemonic (SLIP-39's reference code) and PyNaCl,
# independently of SealKit.
"""Makes Fixtures/shares/vectors.json: share backups (docs/transfer.md, "Share backup") written from the
spec with PyNaCl, hashlib and python-shamir-mnemonic, independently of SealKit. Each vector holds the
bundle line, the shares, the SLIP-39 passphrase, and the ids and fingerprints the bundle must restore.

Run: python3 Scripts/make-share-vectors.py   (random each run; the checked-in file is one run)
"""
import json
import os
import sys

from shamir_mnemonic import shamir
from shamir_mnemonic.shamir import EncryptedMasterSecret

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer.bundles import ems_tag, shares_bundle  # noqa: E402
from peer.keys import fingerprint_text  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "shares")


def vector(name, ids, passphrase, group_threshold, groups):
    secret = os.urandom(32)
    identifier = shamir._random_identifier() if hasattr(shamir, "_random_identifier") else int.from_bytes(os.urandom(2), "big") & 0x7FFF
    ems = EncryptedMasterSecret.from_master_secret(secret, passphrase.encode(), identifier, True, 1)
    created = 1764000000
    # Every id's first key is current, the others retired a second after the bundle's time.
    versions = [(n, [(key, created, None if index == 0 else created + 1) for index, key in enumerate(keys)]) for n, keys in ids]
    bundle = shares_bundle(versions, secret, created, ems_tag(ems))
    shares = [[s.mnemonic() for s in group] for group in shamir.split_ems(group_threshold, groups, ems)]
    return {
        "name": name, "passphrase": passphrase, "bundle": bundle, "group_threshold": group_threshold,
        "groups": [list(g) for g in groups], "shares": shares,
        "ids": [[n, fingerprint_text(keys[0]), len(keys)] for n, keys in ids],
    }


vectors = [
    vector("one id, 2 of 3, no passphrase", [("alice", [os.urandom(32)])], "", 1, [(2, 3)]),
    vector("two ids with a retired key, 3 of 5, a passphrase", [("alice", [os.urandom(32), os.urandom(32)]), ("bob", [os.urandom(32)])],
           "correct horse", 1, [(3, 5)]),
    vector("groups: 2 of {2 of 3, 3 of 5, 1 of 1}", [("café", [os.urandom(32)])], "", 2, [(2, 3), (3, 5), (1, 1)]),
]
os.makedirs(ROOT, exist_ok=True)
with open(os.path.join(ROOT, "vectors.json"), "w") as f:
    json.dump({"about": __doc__.strip().splitlines()[0], "vectors": vectors}, f, indent=2, ensure_ascii=False)
    f.write("\n")
print("wrote", os.path.join(ROOT, "vectors.json"), file=sys.stderr)
