#!/usr/bin/env python3
# Python: a fuzz-seed generator, sealing its seeds with PyNaCl rather than with the code being fuzzed.
"""Writes a seed corpus for each fuzz target into OUT/<target>/, from the files in Fixtures/.

    fuzz_seeds.py FIXTURES OUT
"""
import base64
import glob
import hashlib
import json
import os
import sys
import urllib.parse

import nacl.secret
import nacl.utils

# The fuzz targets' fixed keys (Sources/SealKitFuzz/FuzzTargets.swift), so seeds can authenticate.
FUZZ_KEYS = ["AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=", "+RCiJFwwS1QhC87mwjLZVopVCPERtT2rcjVAZm7MYno="]


def write(out, target, data):
    folder = os.path.join(out, target)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(folder, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def key_file(key_id, entries, protection="protection none"):
    lines = ["sealkit-keyfile 1", "id " + base64.b64encode(key_id.encode()).decode(), protection]
    for fingerprint, created, retired, material in entries:
        lines.append(f"key {fingerprint} {created} {retired} {material}")
    return "\n".join(lines) + "\n"


def main(fixtures, out):
    # sharing: every shared value and group text of Fixtures/sharing, and the identities.
    sharing = json.load(open(os.path.join(fixtures, "sharing", "vectors.json")))
    for vector in sharing["values"]:
        write(out, "sharing", vector["value"])
    for vector in sharing["groups"]:
        write(out, "sharing", vector["text"])
    for vector in sharing["identities"]:
        write(out, "sharing", vector["identity"])
    # And values the fuzz target's identities open: from its first key, for its second, in field ssn.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from peer import share
    first, second = (base64.b64decode(k) for k in FUZZ_KEYS)
    write(out, "sharing", share.seal_shared(b"078-05-1120", first, [share.identity(second)[3]], b"alice", 1, b"ssn"))
    write(out, "sharing", share.seal_shared(b"", second, [], b"alice", 2, b""))
    # v2: every vector of Fixtures/v2, and values the fuzz target's ring opens (id alice, its first key).
    for vector in json.load(open(os.path.join(fixtures, "v2", "vectors.json")))["vectors"]:
        write(out, "v2", vector["ciphertext"])
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import sealkit_v2
    fuzz_key = bytes(range(1, 33))
    write(out, "v2", sealkit_v2.seal(fuzz_key, "alice", "field", "ssn", b"078-05-1120"))
    write(out, "v2", sealkit_v2.seal(fuzz_key, "alice", "context", "", b""))
    # image: small netpbm images of each kind, a tiny PNG, and a QR code from qrencode when it is installed.
    for header in (b"P1 2 2 1 0 0 1", b"P2 2 2 255 0 128 255 64", b"P4 8 1 \xaa", b"P5 2 1 255 \x00\xff", b"P6 1 1 255 \x10\x20\x30"):
        write(out, "image", header)
    import struct, zlib, shutil, subprocess
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 0, 0, 0, 0))
    write(out, "image", png + chunk(b"IDAT", zlib.compress(b"\x00\x00\xff\x00\xff\x00")) + chunk(b"IEND", b""))
    if shutil.which("qrencode"):
        write(out, "image", subprocess.run(["qrencode", "-o", "-", "-t", "PNG", "-s", "2", "fuzz"], capture_output=True).stdout)
    # shares: every SLIP-39 vector's mnemonics, one file per vector, one share per line.
    for vector in json.load(open(os.path.join(fixtures, "slip39", "vectors.json"))):
        write(out, "shares", "\n".join(vector[1]))
    vectors = json.load(open(os.path.join(fixtures, "secretbox", "vectors.json")))["vectors"]
    keys = sorted({v["key"] for v in vectors if "key" in v})
    for vector in vectors:
        if "ciphertext" in vector:
            write(out, "ciphertext", vector["ciphertext"])
            write(out, "base64", vector["ciphertext"])
    for key in FUZZ_KEYS:
        box = nacl.secret.SecretBox(base64.b64decode(key))
        for plaintext in [b"", b"a", "héllo ✓".encode(), b"x" * 100]:
            write(out, "ciphertext", base64.b64encode(bytes(box.encrypt(plaintext))).decode())
    for key in keys + FUZZ_KEYS:
        write(out, "base64", key)
        write(out, "keytext", key + "\n")
        link = "https://example.rownd.link/s/abc#"
        write(out, "keytext", json.dumps({"data": link + key}))
        write(out, "keytext", '{"data": "' + (link + key).replace("/", "\\/") + '"}')
        write(out, "keytext", link + urllib.parse.quote(key, safe=""))
    for material in FUZZ_KEYS:
        write(out, "keyfile", key_file("user@example.com", [("0123456789abcdef", 1700000000, "-", material)]))
        # Times no keystore or output can show: refused as a damaged file, never a trap.
        for time in (9223372036854775807, -9223372036854775808, 253402300800):
            write(out, "keyfile", key_file("t", [("0123456789abcdef", time, "-", material)]))
        write(out, "keyfile", key_file("ユーザー", [
            ("0123456789abcdef", 1700000300, "-", material),
            ("fedcba9876543210", 1700000000, 1700000300, FUZZ_KEYS[0])]))
    salt = base64.b64encode(bytes(range(16))).decode()
    sealed = base64.b64encode(bytes(72)).decode()
    write(out, "keyfile", key_file("p", [("00112233445566ff", 1700000000, "-", sealed)],
                                   f"protection argon2id 2 67108864 {salt}"))
    # Version 2 (protected, one sealed record): key lines without material, then the sealed line.
    check = base64.b64encode(bytes(16)).decode()
    for count in (1, 3):
        lines = ["sealkit-keyfile 2", "id " + base64.b64encode(b"v2").decode(),
                 f"protection argon2id 2 67108864 {salt}", f"check {check}"]
        for index in range(count):
            lines.append(f"key {index:016x} {1700000000 - index} {'-' if index == 0 else 1700000000 - index + 1}")
        lines.append("sealed " + base64.b64encode(bytes(24 + 32 * count + 16)).decode())
        write(out, "keyfile", "\n".join(lines) + "\n")
    # Sealed to a TPM: the TPM vectors' files, whatever their outcome.
    for vector in json.load(open(os.path.join(fixtures, "tpm", "vectors.json")))["vectors"]:
        write(out, "keyfile", vector["file"])
    # Transfer codes: offers, replies, parts and backups, from the transfer vectors.
    # Offers and replies v2 (and the retired v1) come from Fixtures/transfer below; SPAKE2
    # messages from Fixtures/pake (python-spake2's), codes in every form people type them.
    pake = os.path.join(fixtures, "pake", "vectors.json")
    if os.path.exists(pake):
        spake = json.load(open(pake))
        for exchange in spake["exchanges"]:
            write(out, "spake2", bytes.fromhex(exchange["message_a"]))
            write(out, "spake2", bytes.fromhex(exchange["message_b"]))
        for bad in spake["bad_messages"]:
            write(out, "spake2", bytes.fromhex(bad["message"]))
    for code in ["7-guitarist-revenge", " 7 Guitarist REVENGE\n", "007-guitarist-revenge", "7-revenge-guitarist",
                 "123456789-adroitness-aardvark", "7--guitarist--revenge", "7-guitarist"]:
        write(out, "code", code)
    transfer = os.path.join(fixtures, "transfer", "vectors.json")
    if os.path.exists(transfer):
        for vector in json.load(open(transfer)):
            lines = vector.get("lines", [])
            for line in lines:
                kind = line.split(":", 1)[0].split("-")[1] if line.startswith("sealkit-") else None
                if kind in ("offer", "reply", "backup"):
                    write(out, kind, line)
            write(out, "parts", "\n".join(lines))
            write(out, "reply", "\n".join(lines))
    # JSON documents: profiles, schemas and audit exports.
    documents = glob.glob(os.path.join(fixtures, "profile", "*.json")) + glob.glob(
        os.path.join(fixtures, "audit", "**", "*.*json*"), recursive=True)
    for path in documents:
        data = open(path, "rb").read()
        if len(data) > 65536:
            continue
        write(out, "audit", data)
        if path.endswith(".json"):
            write(out, "json", data)
            write(out, "schema" if "schema" in os.path.basename(path) else "profile", data)
    # Profile seals: each vector's seal text and whole profile.
    seals = os.path.join(fixtures, "seal", "vectors.json")
    if os.path.exists(seals):
        for vector in json.load(open(seals))["vectors"]:
            seal = vector["profile"].get("sealkit_seal")
            if isinstance(seal, str):
                write(out, "seal", seal)
            write(out, "seal", json.dumps(vector["profile"]))
    # The audit split around a shuffle: tagged lines, and merged facts as the Spark job hands them over.
    write(out, "facts", '0 1 {"ssn":"078-05-1120","notes":"sk2:AAAA"}\n0 2 {"notes":null}\n1 1 []\n')
    write(out, "facts", '{"files":["a.ndjson","b.json"]}\n'
          '{"finding":{"kind":"plaintext","severity":"error","message":"m","file":0,"line":1,"field":"ssn"}}\n'
          '{"counts":{"values":1,"profiles":1,"blank_lines":0}}\n{"summary":{"values":1,"profiles":1,"files":2}}\n')
    # Other parsers' fixtures join as their targets appear.
    for path in glob.glob(os.path.join(fixtures, "fuzz", "*", "*")):
        write(out, os.path.basename(os.path.dirname(path)), open(path, "rb").read())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
