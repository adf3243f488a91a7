#!/usr/bin/env python3
# Python: the v2 format's independent peer implementation, on PyNaCl, that SealKit's tests compare against.
"""SealKit's v2 ciphertext format (docs/format.md), written from the spec alone with PyNaCl,
hashlib and base64: the independent implementation that SealKit's v2 tests compare against.

  sealkit_v2.py make-vectors         writes Fixtures/v2/vectors.json (deterministic nonces)
  sealkit_v2.py seal  < request.json prints a v2 ciphertext
  sealkit_v2.py open  < request.json prints {"outcome": ..., "plaintext": ...}

A request is JSON on stdin (keys never go on a command line):
  {"keys": [base64, ...], "id": "alice", "place": {"kind": "field"|"context", "name": "ssn"},
   "plaintext": "...", "ciphertext": "..."}
"""
import base64
import hashlib
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer.keys import fingerprint, subkey as kdf_subkey  # noqa: E402

from nacl.bindings import (
    crypto_aead_xchacha20poly1305_ietf_decrypt,
    crypto_aead_xchacha20poly1305_ietf_encrypt,
)
from nacl.exceptions import CryptoError

PREFIX = "sk2:"
VERSION = 2
HEADER = 1 + 8 + 8
NONCE = 24
MAC = 16
KINDS = {"field": 1, "context": 2}


def subkey(key, subkey_id):
    """v2's subkeys: 1 seals, 2 keys the place tag, under the KDF context "sealkit2"."""
    return kdf_subkey(key, subkey_id, b"sealkit2")


def place_encoding(user_id, kind, name):
    i = user_id.encode("utf-8")
    p = name.encode("utf-8")
    return struct.pack(">I", len(i)) + i + bytes([KINDS[kind]]) + struct.pack(">I", len(p)) + p


def seal(key, user_id, kind, name, plaintext, nonce=None):
    encoding = place_encoding(user_id, kind, name)
    place_tag = hashlib.blake2b(encoding, digest_size=8, key=subkey(key, 2)).digest()
    header = bytes([VERSION]) + fingerprint(key) + place_tag
    nonce = nonce if nonce is not None else os.urandom(NONCE)
    sealed = crypto_aead_xchacha20poly1305_ietf_encrypt(plaintext, header + encoding, nonce, subkey(key, 1))
    return PREFIX + base64.b64encode(header + nonce + sealed).decode("ascii")


def open_(keys, user_id, kind, name, text):
    """Returns (outcome, plaintext bytes or None), outcome as in the vectors."""
    if not text.startswith(PREFIX):
        if text.startswith("sk") and ":" in text[:6]:
            return "bad-version", None
        # A v1 reader: a body of ours under one of these keys, stripped of its prefix.
        try:
            body = base64.b64decode(text, validate=True)
        except Exception:
            return "not-v2", None
        if len(body) >= HEADER + NONCE + MAC and body[0] == VERSION and any(fingerprint(k) == body[1:9] for k in keys):
            return "header-stripped", None
        return "not-v2", None
    try:
        body = base64.b64decode(text[len(PREFIX):], validate=True)
    except Exception:
        return "not-base64", None
    if len(body) < HEADER + NONCE + MAC:
        return "truncated", None
    if body[0] != VERSION:
        return "bad-version", None
    candidates = [k for k in keys if fingerprint(k) == body[1:9]]
    if not candidates:
        return "unknown-key", None
    encoding = place_encoding(user_id, kind, name)
    for key in candidates:
        if hashlib.blake2b(encoding, digest_size=8, key=subkey(key, 2)).digest() != body[9:17]:
            continue
        try:
            plaintext = crypto_aead_xchacha20poly1305_ietf_decrypt(
                body[HEADER + NONCE:], body[:HEADER] + encoding, body[HEADER:HEADER + NONCE], subkey(key, 1)
            )
            return "ok", plaintext
        except CryptoError:
            return "tampered", None
    return "wrong-place", None


def make_vectors():
    alice = bytes(range(32))
    alice_old = hashlib.sha256(b"alice's retired key").digest()
    other = hashlib.sha256(b"a key the reader does not have").digest()

    def nonce(n):
        return hashlib.sha256(b"nonce %d" % n).digest()[:NONCE]

    b64 = lambda b: base64.b64encode(b).decode("ascii")
    vectors = []

    def add(name, outcome, text, keys, user_id, kind, place, plaintext=None):
        v = {"name": name, "expect": outcome, "keys": [b64(k) for k in keys], "id": user_id,
             "place": {"kind": kind, "name": place}, "ciphertext": text}
        if plaintext is not None:
            v["plaintext"] = plaintext
        got, opened = open_(keys, user_id, kind, place, text)
        expected = "wrong-place" if outcome.startswith("other-") else outcome
        assert got == expected, (name, got, outcome)
        assert plaintext is None or opened.decode("utf-8") == plaintext, name
        vectors.append(v)

    ssn = seal(alice, "alice", "field", "ssn", b"078-05-1120", nonce(1))
    add("field-ok", "ok", ssn, [alice], "alice", "field", "ssn", "078-05-1120")
    add("empty-plaintext", "ok", seal(alice, "alice", "context", "", b"", nonce(2)), [alice], "alice", "context", "", "")
    add("context-ok", "ok", seal(alice, "alice", "context", "billing", "Zoë ✓".encode(), nonce(3)),
        [alice], "alice", "context", "billing", "Zoë ✓")
    add("unicode-id-and-field", "ok", seal(alice, "café", "field", "naïve", b"x", nonce(4)),
        [alice], "café", "field", "naïve", "x")
    add("retired-key-ok", "ok", seal(alice_old, "alice", "field", "notes", b"allergic", nonce(5)),
        [alice, alice_old], "alice", "field", "notes", "allergic")
    add("other-field", "other-field", ssn, [alice], "alice", "field", "nickname")
    add("other-user", "other-user", ssn, [alice], "bob", "field", "ssn")
    add("field-is-not-context", "other-context", ssn, [alice], "alice", "context", "ssn")
    add("other-context", "other-context", seal(alice, "alice", "context", "billing", b"x", nonce(6)),
        [alice], "alice", "context", "shipping")
    add("unknown-key", "unknown-key", seal(other, "alice", "field", "ssn", b"078-05-1120", nonce(7)),
        [alice, alice_old], "alice", "field", "ssn")
    body = bytearray(base64.b64decode(ssn[len(PREFIX):]))
    tampered = bytearray(body)
    tampered[-1] ^= 1
    add("tampered-tag", "tampered", PREFIX + b64(bytes(tampered)), [alice], "alice", "field", "ssn")
    tampered = bytearray(body)
    tampered[HEADER] ^= 0x80
    add("tampered-nonce", "tampered", PREFIX + b64(bytes(tampered)), [alice], "alice", "field", "ssn")
    add("truncated", "truncated", PREFIX + b64(bytes(body[:HEADER + NONCE + MAC - 1])), [alice], "alice", "field", "ssn")
    add("bad-version-prefix", "bad-version", "sk3:" + b64(bytes(body)), [alice], "alice", "field", "ssn")
    wrong = bytearray(body)
    wrong[0] = 3
    add("bad-version-byte", "bad-version", PREFIX + b64(bytes(wrong)), [alice], "alice", "field", "ssn")
    add("header-stripped", "header-stripped", b64(bytes(body)), [alice], "alice", "field", "ssn")
    return {
        "description": "SealKit v2 ciphertexts made by Scripts/sealkit_v2.py (PyNaCl and hashlib, from docs/format.md). "
                       "other-* outcomes are all 'sealed for another field or user'.",
        "vectors": vectors,
    }


def main():
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "make-vectors":
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        path = os.path.join(root, "Fixtures", "v2", "vectors.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(make_vectors(), f, indent=2, ensure_ascii=False)
            f.write("\n")
        return
    request = json.load(sys.stdin)
    keys = [base64.b64decode(k) for k in request["keys"]]
    place = request["place"]
    if command == "seal":
        print(seal(keys[0], request["id"], place["kind"], place["name"], request["plaintext"].encode("utf-8")))
    elif command == "open":
        outcome, plaintext = open_(keys, request["id"], place["kind"], place["name"], request["ciphertext"])
        print(json.dumps({"outcome": outcome, "plaintext": plaintext.decode("utf-8") if plaintext is not None else None}))
    else:
        sys.exit("usage: sealkit_v2.py make-vectors | seal | open")


if __name__ == "__main__":
    main()
