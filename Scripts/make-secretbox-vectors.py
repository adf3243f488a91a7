#!/usr/bin/env python3
# Python: the vectors are sealed with PyNaCl, an implementation independent of SealKit.
"""Generates Fixtures/secretbox/vectors.json with PyNaCl, an implementation independent of SealKit.

Every vector states its expected outcome, failures included, so the Swift tests can run them all:
  ok                     decrypts to `plaintext`
  not-base64             rejected before decryption
  too-short              decodes to fewer than 40 bytes (nonce + tag)
  authentication-failed  wrong key, or a tampered nonce, tag or body

Run: python3 Scripts/make-secretbox-vectors.py > Fixtures/secretbox/vectors.json
Deterministic: keys and nonces come from a seeded generator so the file only changes when this script does.
"""
import base64
import json
import random
import sys

import nacl.secret

rng = random.Random(20261122)


def rand(n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def b64(data):
    return base64.b64encode(data).decode("ascii")


def seal(key, plaintext, nonce=None):
    box = nacl.secret.SecretBox(key)
    nonce = nonce or rand(24)
    # PyNaCl's EncryptedMessage is nonce || tag || body: Rownd's layout exactly.
    return bytes(box.encrypt(plaintext.encode("utf-8"), nonce))


vectors = []


def add(name, key, ciphertext, expect, plaintext=None, note=""):
    vector = {"name": name, "key": b64(key), "ciphertext": ciphertext, "expect": expect}
    if plaintext is not None:
        vector["plaintext"] = plaintext
    if note:
        vector["note"] = note
    vectors.append(vector)


# Rownd's iOS and Android SDKs share this published vector.
rownd_key = base64.b64decode("4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ=")
add("rownd-published-vector", rownd_key,
    "Di0IyYbC141WIPKzFnlsQc0BIi1AWKSpLf6Th9TcDDJiidPfkVazXtFibnsqJyKFaQf7SaF68yihnqJXidodfKqKzjM2MnbHbh+O8wpxFO3gO6OhVg==",
    "ok", "This super secret string will never be known.", "from Rownd's SDK test suites")

key = rand(32)
plaintexts = {
    "empty": "",
    "one-byte": "a",
    "ascii-sentence": "The quick brown fox jumps over the lazy dog.",
    "unicode": "héllo wörld ✓ 日本語 🔐",
    "json-text": '{"ssn":"123-45-6789","n":12345678901234567890}',
    "newlines": "line one\nline two\r\n",
    "block-boundary-63": "x" * 63,
    "block-boundary-64": "y" * 64,
    "block-boundary-65": "z" * 65,
    "large-4k": "".join(chr(0x41 + (i % 26)) for i in range(4096)),
}
for name, text in plaintexts.items():
    add(name, key, b64(seal(key, text)), "ok", text)

good = seal(key, "tamper me")
add("wrong-key", rand(32), b64(good), "authentication-failed", note="made with another key")
for label, index in (("nonce", 3), ("tag", 24 + 5), ("body", 40 + 2)):
    bad = bytearray(good)
    bad[index] ^= 0x01
    add(f"tampered-{label}", key, b64(bytes(bad)), "authentication-failed")
add("truncated-body", key, b64(good[:-1]), "authentication-failed", note="one byte short, still over 40 bytes")
add("appended-byte", key, b64(good + b"\x00"), "authentication-failed")
add("truncated-to-39-bytes", key, b64(good[:39]), "too-short")
add("nonce-only", key, b64(good[:24]), "too-short")
add("empty-string", key, "", "too-short", note="decodes to 0 bytes")
add("not-base64-symbols", key, "not base64!", "not-base64")
url_safe = base64.urlsafe_b64encode(good).decode("ascii")
assert url_safe != b64(good), "pick a nonce whose encoding holds + or /"
add("not-base64-url-safe", key, url_safe, "not-base64", note="base64url alphabet")
add("not-base64-missing-padding", key, b64(seal(key, "pad"))[:-1], "not-base64")
add("not-base64-whitespace", key, " " + b64(good), "not-base64")
add("not-base64-line-break", key, b64(good)[:20] + "\n" + b64(good)[20:], "not-base64")
# 'QQ==' is canonical for b'A'; 'QR==' decodes to the same byte with non-zero padding bits.
add("not-base64-noncanonical-padding-bits", key, "QR==", "not-base64", note="non-zero bits after the last character")

json.dump({"format": "sealkit secretbox vectors", "version": 1, "generator": "PyNaCl " + nacl.__version__,
           "vectors": vectors}, fp=sys.stdout, indent=2, ensure_ascii=False)
print()
