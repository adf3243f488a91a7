#!/usr/bin/env python3
# Python: the shares come from python-shamir-mnemonic (SLIP-39's reference code) and PyNaCl,
# independently of SealKit.
"""Makes Fixtures/shares/vectors.json: share backups (docs/transfer.md, "Share backup") written from the
spec with PyNaCl, hashlib and python-shamir-mnemonic, independently of SealKit. Each vector holds the
bundle line, the shares, the SLIP-39 passphrase, and the ids and fingerprints the bundle must restore.

Run: python3 Scripts/make-share-vectors.py   (random each run; the checked-in file is one run)
"""
import base64
import hashlib
import json
import os
import struct
import sys

import nacl.secret
from shamir_mnemonic import shamir
from shamir_mnemonic.shamir import EncryptedMasterSecret

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "shares")


def fingerprint(key):
    digest = hashlib.blake2b(key, digest_size=8, key=b"SealKit key fingerprint v1").hexdigest()
    return ":".join(digest[i:i + 4] for i in range(0, 16, 4))


def key_bundle(ids, created):
    """u16 id count; per id: u8 length, id, u8 version count; per version key, fingerprint, created, retired."""
    out = struct.pack(">H", len(ids))
    for name, keys in ids:
        raw = name.encode()
        out += bytes([len(raw)]) + raw + bytes([len(keys)])
        for index, key in enumerate(keys):
            out += key + hashlib.blake2b(key, digest_size=8, key=b"SealKit key fingerprint v1").digest()
            out += struct.pack(">qq", created, 0 if index == 0 else created + 1)
    return out


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def vector(name, ids, passphrase, group_threshold, groups):
    secret = os.urandom(32)
    identifier = shamir._random_identifier() if hasattr(shamir, "_random_identifier") else int.from_bytes(os.urandom(2), "big") & 0x7FFF
    ems = EncryptedMasterSecret.from_master_secret(secret, passphrase.encode(), identifier, True, 1)
    tag = hashlib.blake2b(b"SealKit SLIP-39 encrypted secret tag v1", digest_size=16, key=ems.ciphertext).digest()
    created = 1764000000
    plaintext = struct.pack(">q", created) + key_bundle(ids, created)
    sealed = bytes(nacl.secret.SecretBox(secret).encrypt(plaintext))
    body = bytes([1]) + tag + sealed
    check = hashlib.blake2b(b"SealKit shares v2 check" + body, digest_size=16).digest()[:4]
    bundle = "sealkit-shares-v1:" + b64url(body + check)
    shares = [[s.mnemonic() for s in group] for group in shamir.split_ems(group_threshold, groups, ems)]
    return {
        "name": name, "passphrase": passphrase, "bundle": bundle, "group_threshold": group_threshold,
        "groups": [list(g) for g in groups], "shares": shares,
        "ids": [[n, fingerprint(keys[0]), len(keys)] for n, keys in ids],
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
