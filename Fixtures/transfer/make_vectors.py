#!/usr/bin/env python3
"""Writes vectors.json: paper backups, parts, and offline transfer offers and replies (v2)
made by an independent implementation of docs/transfer.md (PyNaCl for Argon2id and secretbox,
hashlib for BLAKE2b and SHA-256, python-spake2 for SPAKE2, `cryptography` for HKDF).

Needs PyNaCl and spake2: Scripts/make-spake2-vectors.py makes .venv-vectors with both, so run
  .venv-vectors/bin/python Fixtures/transfer/make_vectors.py
The offline vectors name the receiver's code and fixed SPAKE2 entropy, so a receiver built
with them (TransferReceiver(code:entropy:)) shows exactly the offer here and opens the replies.

Everything is fixed (keys, salts, nonces), so running it again gives the same file.
Backups use libsodium's interactive Argon2id limits to keep tests fast; sealkit writes
moderate ones, and readers accept any limits up to libsodium's sensitive preset.
"""
import hashlib, json, os, struct, sys
import nacl.pwhash, nacl.secret
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from spake2 import SPAKE2_Symmetric

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Scripts"))
from peer.bundles import argon2id, backup_body, backup_plaintext  # noqa: E402
from peer.codes import b64url, checked, split_parts as split  # noqa: E402
from peer.keys import describe, keys_bytes as key_bundle  # noqa: E402

OPS, MEM = nacl.pwhash.argon2id.OPSLIMIT_INTERACTIVE, nacl.pwhash.argon2id.MEMLIMIT_INTERACTIVE


def backup(keys, passphrase: bytes, salt: bytes, nonce: bytes, created: int) -> str:
    derived = argon2id(passphrase, salt, OPS, MEM)
    return "sealkit-backup-v1:" + b64url(backup_body(derived, OPS, MEM, salt, nonce, backup_plaintext(keys, created)))


def key(n: int) -> bytes:
    return hashlib.blake2b(b"vector key %d" % n, digest_size=32).digest()


PASS = b"correct horse battery staple"
one = [("alice@example.com", [(key(1), 1700000000, None)])]
ring = [("user-1", [(key(2), 1700000500, None), (key(3), 1690000000, 1700000500)]),
        ("bob", [(key(4), 1700000000, None)])]
many = [(f"user-{n:03d}@example.com", [(key(100 + n), 1700000000 + n, None)]) for n in range(30)]

b_one = backup(one, PASS, bytes(range(16)), bytes(range(24)), 1750000000)
b_ring = backup(ring, PASS, bytes(range(16, 32)), bytes(range(24, 48)), 1750000001)
b_many = backup(many, PASS, bytes(range(32, 48)), bytes(range(48, 72)), 1750000002)
parts = split(b_many)
other = split(backup(many, PASS, bytes(range(48, 64)), bytes(range(72, 96)), 1750000003))
assert len(parts) >= 3 and len(other) == len(parts)
altered = list(parts)
altered[1] = altered[1][:-1] + ("A" if altered[1][-1] != "A" else "B")

# Offline transfer v2 (docs/transfer.md, "Offline"). The app id is SPAKE2's identity.
APP_ID = b"sealkit/key-transfer/v1"
CODE = "7-guitarist-revenge"
RECEIVER_ENTROPY = hashlib.sha512(b"receiver entropy").digest()


def entropy(seed: bytes):
    return lambda count: seed[:count]


def receiver():
    return SPAKE2_Symmetric(CODE.encode(), idSymmetric=APP_ID, entropy_f=entropy(RECEIVER_ENTROPY))


OFFER_MESSAGE = receiver().start()
offer = checked("offer", 2, OFFER_MESSAGE)


def reply(keys, code: str, offer_message: bytes, seed: int, created: int, lifetime=600) -> str:
    sender = SPAKE2_Symmetric(code.encode(), idSymmetric=APP_ID,
                              entropy_f=entropy(hashlib.sha512(b"sender entropy %d" % seed).digest()))
    message = sender.start()
    shared = sender.finish(offer_message)
    reply_key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                     info=b"sealkit/key-transfer/v1:offline-reply").derive(shared)
    plaintext = b"\x02" + hashlib.sha256(b"reply id %d" % seed).digest()[:16] \
        + struct.pack(">qq", created, created + lifetime) + key_bundle(keys)
    nonce = hashlib.sha256(b"reply nonce %d" % seed).digest()[:24]
    sealed = bytes(nacl.secret.SecretBox(reply_key).encrypt(plaintext, nonce))
    return checked("reply", 2, message + sealed)


other_offer = SPAKE2_Symmetric(b"12-adroitness-aardvark", idSymmetric=APP_ID,
                               entropy_f=entropy(hashlib.sha512(b"other receiver").digest())).start()
r_one = reply(one, CODE, OFFER_MESSAGE, 1, 1750000000)
r_ring = reply(ring, CODE, OFFER_MESSAGE, 2, 1750000000)
r_many = split(reply(many, CODE, OFFER_MESSAGE, 3, 1750000000))
assert len(r_many) >= 2
r_wrong = reply(one, "7-guitarist-aardvark", OFFER_MESSAGE, 4, 1750000000)
r_other = reply(one, CODE, other_offer, 5, 1750000000)
mistyped = r_one[:40] + ("A" if r_one[40] != "A" else "B") + r_one[41:]
offline = dict(code=CODE, entropy=RECEIVER_ENTROPY.hex(), now=1750000100)

vectors = [
    dict(name="offer-v2", kind="offer", lines=[offer], expect="ok", receiver=offline),
    dict(name="offer-v1-retired", kind="offer", lines=["sealkit-offer-v1:" + b64url(bytes(64))], expect="retired-version"),
    dict(name="reply-v2-one-key", kind="reply", lines=[r_one], expect="ok", keys=describe(one), receiver=offline),
    dict(name="reply-v2-retired-keys-two-ids", kind="reply", lines=[r_ring], expect="ok", keys=describe(ring),
         receiver=offline),
    dict(name="reply-v2-in-parts-out-of-order", kind="reply", lines=r_many[::-1], expect="ok", keys=describe(many),
         receiver=offline),
    dict(name="reply-v2-wrong-code", kind="reply", lines=[r_wrong], expect="wrong-code", receiver=offline),
    dict(name="reply-v2-for-another-offer", kind="reply", lines=[r_other], expect="wrong-code", receiver=offline),
    dict(name="reply-v2-mistyped", kind="reply", lines=[mistyped], expect="malformed", receiver=offline),
    dict(name="reply-v2-expired", kind="reply", lines=[r_one], expect="expired",
         receiver=dict(offline, now=1750000000 + 600 + 121)),
    dict(name="reply-v1-retired", kind="reply", lines=["sealkit-reply-v1:" + b64url(bytes(200))], expect="retired-version",
         receiver=offline),
    dict(name="backup-one-key", kind="backup", lines=[b_one], passphrase=PASS.decode(), expect="ok", keys=describe(one)),
    dict(name="backup-retired-keys-two-ids", kind="backup", lines=[b_ring], passphrase=PASS.decode(), expect="ok",
         keys=describe(ring)),
    dict(name="backup-wrong-passphrase", kind="backup", lines=[b_one], passphrase="Correct horse battery staple",
         expect="wrong-passphrase"),
    dict(name="backup-in-parts-out-of-order", kind="backup", lines=parts[::-1], passphrase=PASS.decode(), expect="ok",
         keys=describe(many)),
    dict(name="parts-missing-one", kind="backup", lines=parts[:-1], passphrase=PASS.decode(), expect="missing-parts"),
    dict(name="parts-duplicated", kind="backup", lines=[parts[0], parts[0]] + parts[1:], passphrase=PASS.decode(),
         expect="duplicate-part"),
    dict(name="parts-from-two-transfers", kind="backup", lines=[parts[0], other[1]] + parts[2:], passphrase=PASS.decode(),
         expect="parts-from-two-transfers"),
    dict(name="parts-altered", kind="backup", lines=altered, passphrase=PASS.decode(), expect="parts-do-not-fit"),
    dict(name="backup-future-version", kind="backup", lines=["sealkit-backup-v2:" + b_one.split(":", 1)[1]],
         passphrase=PASS.decode(), expect="unsupported-version"),
    dict(name="backup-truncated", kind="backup", lines=[b_one[:60]], passphrase=PASS.decode(), expect="malformed"),
]
with open(__file__.rsplit("/", 1)[0] + "/vectors.json", "w") as f:
    json.dump(vectors, f, indent=2)
    f.write("\n")
