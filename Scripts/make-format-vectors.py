#!/usr/bin/env python3
# Python: the vectors are made from the docs alone with PyNaCl, hashlib and python-shamir-mnemonic,
# independently of SealKit.
"""Makes the format vectors of key files, paper backups and share backup bundles, from docs/format.md
("Key file") and docs/transfer.md ("Paper backup", "Share backup", "Keys", "Parts") alone, with PyNaCl,
hashlib and python-shamir-mnemonic, independently of SealKit:

  Fixtures/keyfile/vectors.json   unprotected, protected (version 2) and protected version 1 key files
  Fixtures/backup/vectors.json    paper backups, whole and in parts
  Fixtures/shares/bundles.json    share backup bundles with their shares

Every entry names its expected outcome, failures included. Nothing is random: every salt, nonce, key and
SLIP-39 share comes from SHAKE-256 of a fixed label, so running this again writes the same files. The keys
and passphrases in them are test-only. Argon2id runs with libsodium's smallest limits (1 pass, 8 KiB), which
readers accept, so checking the vectors stays fast.

Run: python3 Scripts/make-format-vectors.py
"""
import base64
import hashlib
import json
import os
import struct
import sys
import unicodedata

import nacl.bindings as sodium
import nacl.secret
from shamir_mnemonic import shamir
from shamir_mnemonic.shamir import EncryptedMasterSecret

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer import bundles  # noqa: E402
from peer.codes import b64, b64url, split_parts  # noqa: E402
from peer.keys import fingerprint, key_file_name as file_name, passphrase_check as check_value  # noqa: E402
from peer.keys import describe  # noqa: E402
from peer.seal import seal_mac  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures")
OPS, MEM = 1, 8192  # libsodium's minimum Argon2id limits
CREATED = 1764000000


def fixed(label, count):
    """`count` bytes that stand in for randomness, the same on every run."""
    return hashlib.shake_256(b"sealkit format vectors: " + label.encode()).digest(count)


def argon2id(passphrase, salt, ops=OPS, mem=MEM):
    return bundles.argon2id(passphrase, salt, ops, mem)


def history(label, count, created=CREATED):
    """`count` keys: the current one first (retired None), then retired ones, newest first."""
    versions = []
    for index in range(count):
        versions.append({
            "key": fixed(f"{label} key {index}", 32),
            "created": created - 1000 * index,
            "retired": None if index == 0 else created - 1000 * index + 500,
        })
    return versions


def as_tuples(ids):
    """peer.keys' form of `ids`: (id, [(key, created, retired or None)])."""
    return [(name, [(v["key"], v["created"], v["retired"]) for v in versions]) for name, versions in ids]


def expected_keys(ids):
    return describe(as_tuples(ids))


# MARK: Key files (docs/format.md, "Key file")

def key_line(v, material=None):
    line = f"key {fingerprint(v['key']).hex()} {v['created']} {'-' if v['retired'] is None else v['retired']}"
    return line + ("" if material is None else " " + material) + "\n"


def unprotected(key_id, versions):
    text = f"sealkit-keyfile 1\nid {b64(key_id.encode())}\nprotection none\n"
    return text + "".join(key_line(v, b64(v["key"])) for v in versions)


def protected(key_id, versions, passphrase, label, ops=OPS, mem=MEM, edit_header=None):
    """Version 2: one AEAD over the keys, every line before `sealed` as associated data.
    `edit_header(header) -> header` changes the header after sealing (tampering)."""
    salt = fixed(label + " salt", 16)
    sealing = argon2id(passphrase, salt, ops, mem)
    header = f"sealkit-keyfile 2\nid {b64(key_id.encode())}\nprotection argon2id {ops} {mem} {b64(salt)}\n"
    header += f"check {b64(check_value(sealing))}\n" + "".join(key_line(v) for v in versions)
    nonce = fixed(label + " nonce", 24)
    box = nonce + sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(
        b"".join(v["key"] for v in versions), header.encode(), nonce, sealing)
    if edit_header:
        header = edit_header(header)
    return header + f"sealed {b64(box)}\n"


def protected_v1(key_id, versions, passphrase, label):
    """Version 1 protected (read only): each key sealed on its own with secretbox."""
    salt = fixed(label + " salt", 16)
    sealing = argon2id(passphrase, salt)
    box = nacl.secret.SecretBox(sealing)
    text = f"sealkit-keyfile 1\nid {b64(key_id.encode())}\nprotection argon2id {OPS} {MEM} {b64(salt)}\n"
    for index, v in enumerate(versions):
        sealed = bytes(box.encrypt(v["key"], fixed(f"{label} nonce {index}", 24)))
        text += key_line(v, b64(sealed))
    return text


def keyfile_vectors():
    vectors = []

    def add(name, text, expect, key_id=None, versions=None, passphrase=None, about=None):
        entry = {"name": name}
        if about:
            entry["about"] = about
        entry["file"] = text
        if passphrase is not None:
            entry["passphrase"] = passphrase
        entry["expect"] = expect
        if expect == "ok":
            entry["id"] = key_id
            entry["file_name"] = file_name(key_id)
            entry["keys"] = expected_keys([(key_id, versions)])[0]["versions"]
        vectors.append(entry)

    alice = history("alice", 1)
    cafe = history("café", 3)
    add("unprotected, one key", unprotected("alice", alice), "ok", "alice", alice)
    add("unprotected, a current and two retired keys, an id beyond ASCII", unprotected("café", cafe), "ok", "café", cafe,
        about="the id is NFC: U+00E9; the file name hashes its UTF-8")
    good = unprotected("alice", alice)
    add("no final newline", good[:-1], "malformed")
    add("CRLF line ends", good.replace("\n", "\r\n"), "malformed")
    add("fingerprint in upper-case hex", good.replace(fingerprint(alice[0]["key"]).hex(), fingerprint(alice[0]["key"]).hex().upper()),
        "malformed")
    add("id in base64url without padding", good.replace("id " + b64(b"alice"), "id " + b64url(b"alice")), "malformed")
    add("id not in NFC", unprotected(unicodedata.normalize("NFD", "café"), cafe), "malformed",
        about="e followed by U+0301: written by a SealKit from before ids were normalized; keys migrate --normalize reads it")
    add("two spaces between fields", good.replace("protection none", "protection  none"), "malformed")
    add("unknown version", good.replace("sealkit-keyfile 1", "sealkit-keyfile 3"), "malformed")
    add("protection none in a version 2 file", good.replace("sealkit-keyfile 1", "sealkit-keyfile 2"), "malformed")
    two = history("two", 2)
    add("no current key listed first", unprotected("alice", [two[1], two[0]]), "malformed")
    add("two current keys", unprotected("alice", [two[0], dict(two[1], retired=None)]), "malformed")
    add("a created time with a leading zero", good.replace(f" {CREATED} ", f" 0{CREATED} "), "malformed")
    add("a created time with a plus sign", good.replace(f" {CREATED} ", f" +{CREATED} "), "malformed")
    add("Argon2id limits with a leading zero", protected("alice", alice, b"correct horse battery staple", "p1").replace(
        f"argon2id {OPS} {MEM} ", f"argon2id 0{OPS} {MEM} "), "malformed", passphrase="correct horse battery staple")
    add("a created time past 9999-12-31", unprotected("alice", [dict(alice[0], created=253402300800)]), "malformed")
    add("key base64 with stray bits", good.replace(b64(alice[0]["key"]), b64(alice[0]["key"])[:-2] + "B="), "malformed")
    other = fixed("another key", 32)
    add("a key that does not match its fingerprint",
        good.replace(b64(alice[0]["key"]), b64(other)), "fingerprint-mismatch")

    phrase = "correct horse battery staple"
    add("protected, one key", protected("alice", alice, phrase.encode(), "p1"), "ok", "alice", alice, phrase)
    add("protected, three keys", protected("café", cafe, phrase.encode(), "p3"), "ok", "café", cafe, phrase)
    add("protected, wrong passphrase", protected("alice", alice, phrase.encode(), "p1"), "wrong-passphrase", passphrase="Correct horse battery staple")
    spaced = "  Pässwörter mit Leerzeichen "
    nfc = protected("alice", alice, spaced.encode(), "p4")
    add("protected, a passphrase with spaces and non-ASCII (NFC), as given", nfc, "ok", "alice", alice, spaced)
    add("protected, the same passphrase trimmed", nfc, "wrong-passphrase", passphrase=spaced.strip(),
        about="passphrases are bytes as given: no trimming")
    add("protected, the same passphrase in NFD", nfc, "wrong-passphrase", passphrase=unicodedata.normalize("NFD", spaced),
        about="passphrases are bytes as given: no Unicode normalization")

    sealing = argon2id(phrase.encode(), fixed("p1 salt", 16))
    right = b64(check_value(sealing))
    cut = b64(hashlib.blake2b(b"SealKit key file passphrase check v2", digest_size=32, key=sealing).digest()[:16])
    add("protected, check cut from a 32-byte BLAKE2b", protected("alice", alice, phrase.encode(), "p1").replace(right, cut),
        "wrong-passphrase", passphrase=phrase, about="the check is a 16-byte BLAKE2b output, not a prefix of a longer one")
    add("protected, a retired time changed", protected("café", cafe, phrase.encode(), "p3",
        edit_header=lambda h: h.replace(f" {cafe[1]['retired']}\n", f" {cafe[1]['retired'] + 1}\n")), "tampered", passphrase=phrase)
    add("protected, two key lines swapped", protected("café", cafe, phrase.encode(), "p3",
        edit_header=lambda h: h.replace(key_line(cafe[1]) + key_line(cafe[2]), key_line(cafe[2]) + key_line(cafe[1]))),
        "tampered", passphrase=phrase)
    text = protected("alice", alice, phrase.encode(), "p1")
    sealed_line = text.splitlines()[-1]
    box = bytearray(base64.b64decode(sealed_line.split(" ")[1]))
    box[30] ^= 1
    add("protected, a byte of the sealed keys flipped", text.replace(sealed_line, "sealed " + b64(bytes(box))), "tampered",
        passphrase=phrase)
    add("protected, Argon2id limits above libsodium's sensitive preset",
        protected("alice", alice, phrase.encode(), "p1").replace(f"argon2id {OPS} {MEM} ", f"argon2id 5 {MEM} "), "malformed",
        passphrase=phrase)
    add("protected, a 15-byte salt", protected("alice", alice, phrase.encode(), "p1").replace(
        b64(fixed("p1 salt", 16)), b64(fixed("p1 salt", 16)[:15])), "malformed", passphrase=phrase)
    add("protected, no sealed line", "".join(protected("alice", alice, phrase.encode(), "p1").splitlines(True)[:-1]), "malformed",
        passphrase=phrase)

    v1 = protected_v1("café", cafe, phrase.encode(), "v1")
    add("protected version 1 (read only), three keys", v1, "ok", "café", cafe, phrase)
    add("protected version 1, wrong passphrase", v1, "wrong-passphrase", passphrase="Correct horse battery staple")
    lines = v1.splitlines(True)
    material = lines[-1].rstrip("\n").split(" ")[4]
    raw = bytearray(base64.b64decode(material))
    raw[-1] ^= 1
    lines[-1] = lines[-1].replace(material, b64(bytes(raw)))
    add("protected version 1, a retired key's box altered", "".join(lines), "tampered", passphrase=phrase)
    return vectors


# MARK: Keys, paper backups, parts (docs/transfer.md)

def backup_body(ids, passphrase, label, ops=OPS, mem=MEM, version=1, created=CREATED, inner=None, byte_order=">"):
    salt = fixed(label + " salt", 16)
    key = argon2id(passphrase, salt, ops, mem) if byte_order == ">" else argon2id(passphrase, salt)
    plaintext = inner if inner is not None else bundles.backup_plaintext(as_tuples(ids), created, version)
    return bundles.backup_body(key, ops, mem, salt, fixed(label + " nonce", 24), plaintext, byte_order)


def backup_vectors():
    vectors = []

    def add(name, lines, passphrase, expect, ids=None, about=None):
        entry = {"name": name}
        if about:
            entry["about"] = about
        entry.update({"lines": lines, "passphrase": passphrase, "expect": expect})
        if expect == "ok":
            entry["created"] = CREATED
            entry["keys"] = expected_keys(ids)
        vectors.append(entry)

    phrase = "correct horse battery staple"
    one = [("alice@example.com", history("b-alice", 1))]
    two = [("user-1", history("b-user-1", 3)), ("café", history("b-cafe", 1))]
    code = lambda body: "sealkit-backup-v1:" + b64url(body)
    add("one key", [code(backup_body(one, phrase.encode(), "b1"))], phrase, "ok", one)
    add("two ids with retired keys", [code(backup_body(two, phrase.encode(), "b2"))], phrase, "ok", two)
    big = [("many", history("b-many", 255))]
    add("one id of 255 keys, in parts", split_parts(code(backup_body(big, phrase.encode(), "b3"))), phrase, "ok", big,
        about="the most keys of one id a backup carries; the parts are split as docs/transfer.md says, so a writer makes these exact lines")
    generated = " ".join(["abacus", "tidy", "zebra", "opal", "lunar", "wafer"])
    add("a passphrase of six words joined by single spaces", [code(backup_body(one, generated.encode(), "b4"))], generated, "ok", one)
    spaced = "  Pässwörter mit Leerzeichen "
    text = code(backup_body(one, spaced.encode(), "b5"))
    add("a chosen passphrase with spaces and non-ASCII (NFC), as given", [text], spaced, "ok", one)
    add("the same passphrase trimmed", [text], spaced.strip(), "wrong-passphrase")
    add("the same passphrase in NFD", [text], unicodedata.normalize("NFD", spaced), "wrong-passphrase")
    good = backup_body(one, phrase.encode(), "b1")
    add("wrong passphrase", [code(good)], "Correct horse battery staple", "wrong-passphrase")
    flipped = bytearray(good)
    flipped[-1] ^= 1
    add("a byte of the secretbox altered", [code(bytes(flipped))], phrase, "wrong-passphrase",
        about="a wrong passphrase and an altered backup cannot be told apart")
    add("limits written little-endian", [code(backup_body(one, phrase.encode(), "b1", byte_order="<"))], phrase, "unsupported-kdf",
        about="1 pass, 8192 bytes read big-endian as 2^56 passes and 2^45 bytes: refused before Argon2id runs")
    add("limits above libsodium's sensitive preset", [code(backup_body(one, phrase.encode(), "b1", ops=5))], phrase, "unsupported-kdf")
    add("inner version 2", [code(backup_body(one, phrase.encode(), "b1", version=2))], phrase, "malformed")
    add("prefix version 2", ["sealkit-backup-v2:" + b64url(good)], phrase, "unsupported-version")
    add("created past 9999-12-31", [code(backup_body(one, phrase.encode(), "b1", created=253402300800))], phrase, "malformed")
    plain = bundles.backup_plaintext(as_tuples(one), CREATED)
    add("a byte left over after the keys", [code(backup_body(one, phrase.encode(), "b1", inner=plain + b"\0"))], phrase, "malformed")
    twice = [("alice", history("b-alice", 1)), ("alice", history("b-other", 1))]
    add("an id twice", [code(backup_body(twice, phrase.encode(), "b1"))], phrase, "malformed")
    nfd = [(unicodedata.normalize("NFD", "café"), history("b-cafe", 1))]
    add("an id in NFD, read as its NFC form", [code(backup_body(nfd, phrase.encode(), "b1"))], phrase, "ok", [("café", nfd[0][1])])
    both = [("café", history("b-cafe", 1)), (unicodedata.normalize("NFD", "café"), history("b-other", 1))]
    add("an id in NFC and in NFD: one id twice", [code(backup_body(both, phrase.encode(), "b1"))], phrase, "malformed")
    wrong = bytearray(plain)
    wrong[-24] ^= 1  # the fingerprint's last byte
    add("a key that does not match its fingerprint", [code(backup_body(one, phrase.encode(), "b1", inner=bytes(wrong)))], phrase, "malformed")
    retired = [("alice", [history("b-alice", 2)[0], dict(history("b-alice", 2)[1], retired=None)])]
    add("a retired key with retired time 0", [code(backup_body(retired, phrase.encode(), "b1"))], phrase, "malformed")
    encoded = b64url(good)
    standard = encoded.replace("-", "+").replace("_", "/") if ("-" in encoded or "_" in encoded) else encoded[:-1] + "+"
    add("the standard base64 alphabet", ["sealkit-backup-v1:" + standard], phrase, "malformed")
    add("base64url with padding", [code(good[:-1]) + "="], phrase, "malformed")
    # Unpadded base64url of n bytes leaves bits unused in its last character unless 3 divides n; setting
    # one makes a text that decodes to the same bytes by a lenient reader, and that a strict one refuses.
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    candidates = [backup_body(ids, phrase.encode(), "b1") for ids in (one, two, big[:1])]
    body = next(b for b in candidates if len(b) % 3)
    canonical = code(body)
    add("base64url with stray bits after the last byte", [canonical[:-1] + alphabet[alphabet.index(canonical[-1]) | 1]], phrase,
        "malformed")
    add("truncated", [code(good[:16 + 16 + 40])], phrase, "malformed")
    parts = split_parts(code(backup_body(big, phrase.encode(), "b3")))
    add("parts, one missing", parts[:3] + parts[4:], phrase, "missing-parts")
    return vectors


# MARK: Share backup bundles (docs/transfer.md, "Share backup")

class FixedRandom:
    """Stands in for python-shamir-mnemonic's RANDOM_BYTES, so its shares come out the same each run."""

    def __init__(self, label):
        self.label, self.counter = label, 0

    def __call__(self, count):
        self.counter += 1
        return fixed(f"{self.label} shamir {self.counter}", count)


def shares_bundle(ids, secret, ems, label, version=1, created=CREATED, tag=None):
    tag = tag if tag is not None else bundles.ems_tag(ems)
    return bundles.shares_bundle(as_tuples(ids), secret, created, tag, fixed(label + " nonce", 24), version)


def make_shares(label, secret, passphrase, groups=((2, 3),), group_threshold=1, identifier=None):
    shamir.RANDOM_BYTES = FixedRandom(label)
    identifier = identifier if identifier is not None else int.from_bytes(fixed(label + " id", 2), "big") & 0x7FFF
    ems = EncryptedMasterSecret.from_master_secret(secret, passphrase, identifier, True, 1)
    shares = [[s.mnemonic() for s in group] for group in shamir.split_ems(group_threshold, list(groups), ems)]
    return ems, shares


def bundle_vectors():
    vectors = []

    def add(name, bundle, shares, passphrase, expect, ids=None, about=None):
        entry = {"name": name}
        if about:
            entry["about"] = about
        entry.update({"bundle": bundle, "shares": shares, "passphrase": passphrase, "expect": expect})
        if expect == "ok":
            entry["created"] = CREATED
            entry["keys"] = expected_keys(ids)
        vectors.append(entry)

    one = [("alice", history("s-alice", 2))]
    secret = fixed("s1 secret", 32)
    ems, shares = make_shares("s1", secret, b"")
    bundle = shares_bundle(one, secret, ems, "s1")
    add("2 of 3, no passphrase", bundle, shares[0][:2], "", "ok", one)
    add("2 of 3, the other two shares", bundle, shares[0][1:], "", "ok", one)
    add("one share of 2 of 3", bundle, shares[0][:1], "", "need-more-shares")
    phrase = "Pässwörter"
    ems2, shares2 = make_shares("s2", secret, phrase.encode())
    bundle2 = shares_bundle(one, secret, ems2, "s2")
    add("a SLIP-39 passphrase beyond ASCII, its UTF-8 bytes", bundle2, shares2[0][:2], phrase, "ok", one,
        about="the tag covers the EMS the shares hold, which depends on the passphrase they were made with")
    add("the right shares, the passphrase in NFD", bundle2, shares2[0][:2], unicodedata.normalize("NFD", phrase), "wrong-passphrase",
        about="the shares' EMS has the bundle's tag, but its secret does not open the bundle")
    add("the right shares, no passphrase", bundle2, shares2[0][:2], "", "wrong-passphrase")
    other = fixed("s3 secret", 32)
    ems3, shares3 = make_shares("s3", other, b"")
    add("shares of another backup", bundle, shares3[0][:2], "", "other-backup")
    ems4, shares4 = make_shares("s4", secret, b"", identifier=12345)
    add("shares made afresh from the same secret (another identifier)", bundle, shares4[0][:2], "", "ok", one,
        about="the bundle is bound to the secret alone; these shares' EMS has another tag, which only sorts failures")
    groups = [("bob", history("s-bob", 1)), ("café", history("s-cafe", 1))]
    ems5, shares5 = make_shares("s5", secret, b"", groups=((2, 3), (3, 5), (1, 1)), group_threshold=2)
    bundle5 = shares_bundle(groups, secret, ems5, "s5")
    add("groups: 2 of {2 of 3, 3 of 5, 1 of 1}, groups 1 and 3", bundle5, shares5[0][:2] + shares5[2], "", "ok", groups)
    add("groups: only group 2 complete", bundle5, shares5[1][:3], "", "need-more-shares")
    encoded = bundle[len("sealkit-shares-v1:"):]
    altered = bytearray(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    altered[20] ^= 1
    add("a byte of the bundle altered", "sealkit-shares-v1:" + b64url(bytes(altered)), shares[0][:2], "", "malformed",
        about="its check does not match")
    add("the tag altered, the check recomputed", shares_bundle(one, secret, ems, "s1", tag=bytes(16)), shares[0][:2], "", "ok", one,
        about="the tag is not authenticated: it only sorts failures")
    add("inner version 2, the check recomputed", shares_bundle(one, secret, ems, "s1", version=2), shares[0][:2], "", "malformed")
    add("prefix version 2", bundle.replace("sealkit-shares-v1:", "sealkit-shares-v2:"), shares[0][:2], "", "unsupported-version")
    add("created past 9999-12-31", shares_bundle(one, secret, ems, "s1", created=253402300800), shares[0][:2], "", "malformed")
    add("padded base64url", bundle + "=", shares[0][:2], "", "malformed")
    add("truncated", bundle[:60], shares[0][:2], "", "malformed")
    return vectors


def seal_text(key, user, version, fields, tag=None, body_edit=None, fmt=2, in_data=False, mac_edit=None):
    """A profile seal over `fields` (name -> str or None), as docs/format.md says: format 2 (`sks2:`, where the
    fields sit bound, names as the schema spells them) unless `fmt` is 1 (`sks1:`, read only)."""
    tag = fingerprint(key) if tag is None else tag
    entries = [(name.encode(), None if value is None else value.encode()) for name, value in fields.items()]
    mac = seal_mac(key, fmt, tag, version, user.encode(), in_data, entries)
    if mac_edit:
        mac = mac_edit(mac)
    body = bytes([fmt]) + tag + struct.pack(">Q", version) + mac
    if body_edit:
        body = body_edit(body)
    return f"sks{fmt}:" + b64(body), mac


def seal_vectors():
    """Profile seals: each vector's keys (current first), user, flagged fields, stored profile, the
    version remembered here (or none), and the expected outcome."""
    vectors = []
    old_key, key = fixed("seal key old", 32), fixed("seal key", 32)
    stand_in = lambda label: "sk2:" + b64(fixed("seal ciphertext " + label, 60))
    flagged = ["ssn", "notes", "salary"]
    now = {"ssn": stand_in("ssn 2"), "notes": stand_in("notes 1"), "salary": None}
    before = {"ssn": stand_in("ssn 1"), "notes": stand_in("notes 1"), "salary": None}

    def profile(fields, seal, data=False, extra=None):
        members = {"name": "Alice", **(extra or {})}
        if data:
            body = {"id": "alice", "data": {**members, **fields}}
        else:
            body = {**members, **fields}
        if seal is not None:
            body["sealkit_seal"] = seal
        return body

    def add(name, expect, prof, keys=(key,), user="alice", remembered=None, version=None, about=None, flags=None):
        vector = {"name": name, "expect": expect, "keys": [b64(k) for k in keys], "user": user, "flagged": flags or flagged,
                  "profile": prof, "remembered": remembered}
        if version is not None:
            vector["version"] = version
        if about:
            vector["about"] = about
        vectors.append(vector)

    seal3, mac3 = seal_text(key, "alice", 3, now)
    seal2, mac2 = seal_text(key, "alice", 2, before)
    mark = lambda version, mac: {"version": version, "mac": mac.hex()}
    add("valid", "ok", profile(now, seal3), version=3)
    seal3_data, _ = seal_text(key, "alice", 3, now, in_data=True)
    add("valid, fields in data", "ok", profile(now, seal3_data, data=True), version=3,
        about="the seal covers the flagged fields where the profile keeps them (in data here, bound as 1); it sits at the top level")
    moved = profile(now, seal3_data)
    moved["data"] = None
    add("fields moved out of data", "seal-mismatch", moved,
        about="every flagged field moved from data to the top level, data null: the seal says they were in data")
    add("fields moved into data", "seal-mismatch", profile(now, seal3, data=True),
        about="sealed at the top level, served in data")
    add("MAC differs in its last byte", "seal-mismatch",
        profile(now, seal_text(key, "alice", 3, now, mac_edit=lambda m: m[:-1] + bytes([m[-1] ^ 1]))[0]),
        about="a comparison of part of the MAC would accept it")
    add("MAC differs in its first byte", "seal-mismatch",
        profile(now, seal_text(key, "alice", 3, now, mac_edit=lambda m: bytes([m[0] ^ 0x80]) + m[1:])[0]))
    seal1, _ = seal_text(key, "alice", 3, now, fmt=1)
    add("format 1 (sks1), still read", "ok", profile(now, seal1), version=3,
        about="seals written before format 2: no place bound, entries named by the profile member's bytes")
    add("format 1, fields in data", "ok", profile(now, seal1, data=True), version=3)
    add("format 1, MAC differs in its last byte", "seal-mismatch",
        profile(now, seal_text(key, "alice", 3, now, fmt=1, mac_edit=lambda m: m[:-1] + bytes([m[-1] ^ 1]))[0]))
    add("format 2 body under the sks1 prefix", "seal-mismatch", profile(now, "sks1:" + seal3[5:]))
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    accented = {"ssn": now["ssn"], nfc: stand_in("cafe 1")}
    add("a member spelt in NFD, sealed by the schema's NFC name", "ok",
        profile({"ssn": accented["ssn"], nfd: accented[nfc]}, seal_text(key, "alice", 3, accented)[0]),
        flags=["ssn", nfc], version=3,
        about="format 2 names each entry as the schema spells the field (NFC here), as v2 names its place; the profile's member is NFD")
    add("a member spelt in NFD, sealed by the member's NFD bytes", "seal-mismatch",
        profile({"ssn": accented["ssn"], nfd: accented[nfc]}, seal_text(key, "alice", 3, {"ssn": accented["ssn"], nfd: accented[nfc]})[0]),
        flags=["ssn", nfc], about="a format 2 entry named by the member's bytes, not the schema's spelling")
    add("valid, the same seal remembered", "ok", profile(now, seal3), remembered=mark(3, mac3), version=3)
    add("valid, newer than remembered", "ok", profile(now, seal3), remembered=mark(2, mac2), version=3)
    add("unflagged member changed", "ok", profile(now, seal3, extra={"name": "Mallory"}), version=3,
        about="members the schema does not flag are not covered")
    add("field rolled back", "seal-mismatch", profile({**now, "ssn": before["ssn"]}, seal3),
        about="ssn holds its version-2 ciphertext, valid for this user and field, under the version-3 seal")
    dropped = dict(now); del dropped["notes"]
    add("field dropped", "seal-mismatch", profile(dropped, seal3))
    add("null field dropped", "seal-mismatch", profile({k: v for k, v in now.items() if k != "salary"}, seal3),
        about="a flagged field holding null is covered as null; absent is not null")
    add("field added", "seal-mismatch", profile({**now, "salary": stand_in("salary 1")}, seal3))
    add("seal removed", "seal-missing", profile(now, None))
    add("version lower than remembered", "older", profile(before, seal2), remembered=mark(3, mac3),
        about="the whole version-2 profile, served again after this device saw version 3")
    other_mac = seal_text(key, "alice", 3, {**now, "notes": stand_in("notes 2")})[1]
    add("same version, another seal remembered", "conflicting", profile(now, seal3), remembered=mark(3, other_mac),
        about="two devices both wrote version 3")
    add("another user's seal", "seal-mismatch", profile(now, seal_text(key, "bob", 3, now)[0]),
        about="sealed for bob with the same key bytes; read as alice")
    add("after a key rotation, sealed by the retired key", "ok", profile(now, seal_text(old_key, "alice", 4, now)[0]),
        keys=(key, old_key), version=4)
    add("after a key rotation, sealed by the current key", "ok", profile(now, seal_text(key, "alice", 5, now)[0]),
        keys=(key, old_key), version=5)
    add("sealed by a key not here", "seal-mismatch", profile(now, seal_text(old_key, "alice", 4, now)[0]))
    add("tag of another key", "seal-mismatch", profile(now, seal_text(key, "alice", 3, now, tag=fingerprint(old_key))[0]),
        keys=(key, old_key), about="the MAC is right but the tag names the retired key")
    add("version 0", "seal-mismatch", profile(now, seal_text(key, "alice", 0, now)[0]))
    add("format byte 2", "seal-mismatch", profile(now, seal_text(key, "alice", 3, now, fmt=1, body_edit=lambda b: b"\x02" + b[1:])[0]),
        about="the sks1 prefix with format 2's body byte")
    add("prefix sks2", "seal-mismatch", profile(now, seal1.replace("sks1:", "sks2:")), about="the sks2 prefix with format 1's body byte")
    add("prefix sks3", "seal-mismatch", profile(now, seal3.replace("sks2:", "sks3:")))
    add("truncated", "seal-mismatch", profile(now, seal3[:-4]))
    add("not a string", "seal-mismatch", profile(now, 3))
    add("flagged field not a string", "seal-mismatch", profile({**now, "salary": 52000}, seal3))
    return vectors


def write(path, about, vectors):
    full = os.path.join(ROOT, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        json.dump({"about": about, "made_by": "Scripts/make-format-vectors.py", "vectors": vectors}, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print("wrote", os.path.relpath(full), len(vectors), "vectors", file=sys.stderr)


write("keyfile/vectors.json", "Key files (docs/format.md, \"Key file\"): each entry's file text, passphrase and expected outcome", keyfile_vectors())
write("backup/vectors.json", "Paper backups (docs/transfer.md, \"Paper backup\"): each entry's lines, passphrase and expected outcome", backup_vectors())
write("shares/bundles.json", "Share backup bundles (docs/transfer.md, \"Share backup\"): bundle, shares, SLIP-39 passphrase, expected outcome", bundle_vectors())
write("seal/vectors.json", "Profile seals (docs/format.md, \"Profile seal\"): keys (current first), user, flagged fields, the stored profile, the version remembered here, expected outcome", seal_vectors())
