#!/usr/bin/env python3
# Python: a second reader written from the docs alone, on PyNaCl, hashlib and python-shamir-mnemonic,
# so no SealKit code judges SealKit's own vectors.
"""Checks every format vector's stated outcome with a reader written from docs/format.md ("Key file") and
docs/transfer.md ("Text codes", "Keys", "Parts", "Paper backup", "Share backup") alone, as a second
implementation would: PyNaCl (libsodium's Argon2id, secretbox, XChaCha20-Poly1305), hashlib's BLAKE2b
(the same function as libsodium's crypto_generichash) and python-shamir-mnemonic. No SealKit code runs.

  Fixtures/keyfile/vectors.json   key files
  Fixtures/backup/vectors.json    paper backups (and parts)
  Fixtures/shares/bundles.json    share backup bundles with their shares
  Fixtures/seal/vectors.json      profile seals (docs/format.md, "Profile seal")
  Fixtures/sharing/vectors.json   identities, shared values and group texts (docs/format.md, "Sharing"), through
                                  Scripts/peer/share.py

Run: python3 Scripts/check-format-vectors.py   (exit 0 when every vector gives its outcome)
"""
import base64
import json
import os
import re
import struct
import sys
import unicodedata

import nacl.bindings as sodium
import nacl.exceptions
import nacl.pwhash
import nacl.secret
from shamir_mnemonic import shamir

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer import Outcome  # noqa: E402
from peer.bundles import ems_tag  # noqa: E402
from peer.codes import b64_strict, check as code_check, code_body, join_parts, split_parts  # noqa: E402
from peer.keys import LATEST, describe as expected, fingerprint, key_file_name as file_name, passphrase_check  # noqa: E402
from peer.keys import read_dated_keys, valid_id  # noqa: E402
from peer.seal import seal_mac  # noqa: E402
from peer import share  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures")
OPS = (nacl.pwhash.argon2id.OPSLIMIT_MIN, nacl.pwhash.argon2id.OPSLIMIT_SENSITIVE)
MEM = (nacl.pwhash.argon2id.MEMLIMIT_MIN, nacl.pwhash.argon2id.MEMLIMIT_SENSITIVE)


def decimal(text):
    """Decimal digits, no sign, no leading zero (but 0 itself)."""
    return int(text) if re.fullmatch(r"0|[1-9][0-9]*", text) else None


# MARK: Key files

def read_keyfile(data, passphrase):
    """Returns (id, [(key, created, retired)]) or raises Outcome."""
    if not data.endswith(b"\n"):
        raise Outcome("malformed")
    lines = data[:-1].split(b"\n")
    if len(lines) < 4 or lines[0] not in (b"sealkit-keyfile 1", b"sealkit-keyfile 2"):
        raise Outcome("malformed")
    version = 2 if lines[0] == b"sealkit-keyfile 2" else 1
    try:
        fields = [line.decode().split(" ") for line in lines]
    except UnicodeDecodeError:
        raise Outcome("malformed")
    if len(fields[1]) != 2 or fields[1][0] != "id" or (raw := b64_strict(fields[1][1])) is None:
        raise Outcome("malformed")
    try:
        key_id = raw.decode()
    except UnicodeDecodeError:
        raise Outcome("malformed")
    if not valid_id(key_id) or unicodedata.normalize("NFC", key_id) != key_id:
        raise Outcome("malformed")
    protection = fields[2]
    if protection == ["protection", "none"] and version == 1:
        kdf = None
    elif len(protection) == 5 and protection[:2] == ["protection", "argon2id"]:
        ops, mem, salt = decimal(protection[2]), decimal(protection[3]), b64_strict(protection[4])
        if ops is None or mem is None or salt is None or len(salt) != 16:
            raise Outcome("malformed")
        if not (OPS[0] <= ops <= OPS[1] and MEM[0] <= mem <= MEM[1]):
            raise Outcome("malformed")
        kdf = (ops, mem, salt)
    else:
        raise Outcome("malformed")
    key_fields = fields[3:]
    if version == 2:
        check = b64_strict(fields[3][1]) if len(fields[3]) == 2 and fields[3][0] == "check" else None
        sealed = b64_strict(fields[-1][1]) if len(fields[-1]) == 2 and fields[-1][0] == "sealed" else None
        if check is None or len(check) != 16 or sealed is None or len(lines) < 6:
            raise Outcome("malformed")
        key_fields = fields[4:-1]
        authenticated = data[:len(data) - len(lines[-1]) - 1]
    if len(key_fields) > 4096:
        raise Outcome("malformed")
    entries = []
    for line in key_fields:
        # A version 1 key line has 5 fields; its last one is the key material.
        if len(line) != (5 if version == 1 else 4) or line[0] != "key":
            raise Outcome("malformed")
        if not re.fullmatch(r"[0-9a-f]{16}", line[1]):
            raise Outcome("malformed")
        created = decimal(line[2])
        retired = None if line[3] == "-" else decimal(line[3])
        if created is None or (line[3] != "-" and retired is None):
            raise Outcome("malformed")
        if created > LATEST or (retired is not None and retired > LATEST):
            raise Outcome("malformed")
        if version == 1 and not line[4]:
            raise Outcome("malformed")
        entries.append((bytes.fromhex(line[1]), created, retired, line[4] if version == 1 else None))
    if not entries or entries[0][2] is not None or any(e[2] is None for e in entries[1:]):
        raise Outcome("malformed")

    sealing = None
    if kdf:
        if passphrase is None:
            raise Outcome("locked")
        sealing = nacl.pwhash.argon2id.kdf(32, passphrase, kdf[2], opslimit=kdf[0], memlimit=kdf[1])
    keys = []
    if version == 2:
        if passphrase_check(sealing) != check:
            raise Outcome("wrong-passphrase")
        try:
            opened = sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(sealed[24:], authenticated, sealed[:24], sealing)
        except nacl.exceptions.CryptoError:
            raise Outcome("tampered")
        if len(opened) != 32 * len(entries):
            raise Outcome("malformed")
        keys = [opened[32 * i:32 * i + 32] for i in range(len(entries))]
    else:
        for index, entry in enumerate(entries):
            material = b64_strict(entry[3])
            if material is None:
                raise Outcome("malformed")
            if sealing:
                try:
                    material = nacl.secret.SecretBox(sealing).decrypt(material)
                except nacl.exceptions.CryptoError:
                    raise Outcome("wrong-passphrase" if index == 0 else "tampered")
            if len(material) != 32:
                raise Outcome("malformed")
            keys.append(material)
    for key, entry in zip(keys, entries):
        if fingerprint(key) != entry[0]:
            raise Outcome("fingerprint-mismatch")
    return key_id, [(key, e[1], e[2]) for key, e in zip(keys, entries)]


def check_keyfiles(vectors):
    failures = []
    for v in vectors:
        try:
            key_id, keys = read_keyfile(v["file"].encode(), v["passphrase"].encode() if "passphrase" in v else None)
            outcome = "ok"
        except Outcome as refusal:
            outcome = str(refusal)
        if outcome != v["expect"]:
            failures.append(f"{v['name']}: {outcome}, expected {v['expect']}")
        elif outcome == "ok":
            if key_id != v["id"] or file_name(key_id) != v["file_name"] or expected([(key_id, keys)])[0]["versions"] != v["keys"]:
                failures.append(f"{v['name']}: opened other keys or id than the vector states")
    return failures


# MARK: Paper backups

def read_backup(lines, passphrase):
    body = code_body(join_parts(lines), "backup")
    if len(body) <= 16 + 16 + 40:
        raise Outcome("malformed")
    ops, mem = struct.unpack(">QQ", body[:16])
    if not (OPS[0] <= ops <= OPS[1] and MEM[0] <= mem <= MEM[1]):
        raise Outcome("unsupported-kdf")
    key = nacl.pwhash.argon2id.kdf(32, passphrase, body[16:32], opslimit=ops, memlimit=mem)
    try:
        plaintext = nacl.secret.SecretBox(key).decrypt(body[32:])
    except nacl.exceptions.CryptoError:
        raise Outcome("wrong-passphrase")
    if plaintext[:1] != b"\x01":
        raise Outcome("malformed")
    return read_dated_keys(plaintext[1:])


def check_backups(vectors):
    failures = []
    for v in vectors:
        try:
            created, ids = read_backup(v["lines"], v["passphrase"].encode())
            outcome = "ok"
        except Outcome as refusal:
            outcome = str(refusal)
        if outcome != v["expect"]:
            failures.append(f"{v['name']}: {outcome}, expected {v['expect']}")
        elif outcome == "ok":
            if created != v["created"] or expected(ids) != v["keys"]:
                failures.append(f"{v['name']}: opened other keys than the vector states")
            if split_parts(join_parts(v["lines"])) != v["lines"]:
                failures.append(f"{v['name']}: the parts are not split as docs/transfer.md says")
    return failures


# MARK: Share backup bundles

def read_bundle(bundle, shares, passphrase):
    try:
        groups = shamir.decode_mnemonics(shares)
        ems = shamir.recover_ems(groups)
    except shamir.MnemonicError as error:
        raise Outcome("need-more-shares" if "Insufficient" in str(error) or "Wrong number" in str(error) else "malformed")
    secret = ems.decrypt(passphrase)
    body = code_body(bundle, "shares")
    if len(body) <= 4:
        raise Outcome("malformed")
    body, check = body[:-4], body[-4:]
    if code_check("shares", body) != check:
        raise Outcome("malformed")
    if len(body) <= 1 + 16 + 40 or body[0] != 1:
        raise Outcome("malformed")
    try:
        plaintext = nacl.secret.SecretBox(secret).decrypt(body[17:])
    except nacl.exceptions.CryptoError:
        raise Outcome("wrong-passphrase" if ems_tag(ems) == body[1:17] else "other-backup")
    return read_dated_keys(plaintext)


def check_bundles(vectors):
    failures = []
    for v in vectors:
        try:
            created, ids = read_bundle(v["bundle"], v["shares"], v["passphrase"].encode())
            outcome = "ok"
        except Outcome as refusal:
            outcome = str(refusal)
        if outcome != v["expect"]:
            failures.append(f"{v['name']}: {outcome}, expected {v['expect']}")
        elif outcome == "ok" and (created != v["created"] or expected(ids) != v["keys"]):
            failures.append(f"{v['name']}: opened other keys than the vector states")
    return failures


def check_seals(vectors):
    """docs/format.md, "Profile seal": checks each stored profile's seal as a reading device would."""
    failures = []
    for v in vectors:
        try:
            version = read_seal(v)
            outcome = "ok"
        except Outcome as refusal:
            outcome, version = str(refusal), None
        if outcome != v["expect"] or (outcome == "ok" and version != v["version"]):
            failures.append(f"{v['name']}: got {outcome} {version or ''}, expected {v['expect']} {v.get('version', '')}")
    return failures


def read_seal(v):
    profile, user = v["profile"], v["user"].encode()
    keys = [base64.b64decode(k) for k in v["keys"]]
    if "sealkit_seal" not in profile:
        raise Outcome("seal-missing")
    text = profile["sealkit_seal"]
    if not isinstance(text, str) or text[:5] not in ("sks1:", "sks2:"):
        raise Outcome("seal-mismatch")
    fmt = int(text[3])
    body = b64_strict(text[5:])
    if body is None or len(body) != 49 or body[0] != fmt:
        raise Outcome("seal-mismatch")
    tag, version, mac = body[1:9], struct.unpack(">Q", body[9:17])[0], body[17:]
    if version == 0:
        raise Outcome("seal-mismatch")
    key = next((k for k in keys if fingerprint(k) == tag), None)
    if key is None:
        raise Outcome("seal-mismatch")
    holder, in_data = profile, False
    if isinstance(profile.get("data"), dict) and "data" not in v["flagged"]:
        holder, in_data = profile["data"], True
    # A member is a flagged field when the two are canonically equivalent (their NFC forms are equal); format 2
    # names its entry as the schema spells the field, format 1 as the member is spelt.
    by_nfc = {unicodedata.normalize("NFC", name): name for name in v["flagged"]}
    entries, seen = [], set()
    for member, value in holder.items():
        field = by_nfc.get(unicodedata.normalize("NFC", member))
        if field is None:
            continue
        if field in seen:
            raise Outcome("seal-mismatch")
        seen.add(field)
        name = (field if fmt == 2 else member).encode()
        if value is not None and not isinstance(value, str):
            raise Outcome("seal-mismatch")
        entries.append((name, None if value is None else value.encode()))
    if not sodium.sodium_memcmp(seal_mac(key, fmt, tag, version, user, in_data, entries), mac):
        raise Outcome("seal-mismatch")
    remembered = v["remembered"]
    if remembered is not None:
        if version < remembered["version"]:
            raise Outcome("older")
        if version == remembered["version"] and bytes.fromhex(remembered["mac"]) != mac:
            raise Outcome("conflicting")
    return version


def check_sharing(data):
    """Each identity's text and fingerprint from its key, each shared value opened by every recipient's key (and its
    signature refused for another place), each group text read with its members."""
    failures = []
    keys = {}
    for v in data["identities"]:
        key = base64.b64decode(v["key"])
        keys[v["id"]] = key
        public = share.identity(key)[3]
        if share.identity_text(public) != v["identity"] or share.safety_number(public) != v["fingerprint"]:
            failures.append(f"identity {v['id']}: text or fingerprint differs")
        if share.bech32_secret(share.identity(key)[0]) != v["age_identity"]:
            failures.append(f"identity {v['id']}: age form differs")
    for index, v in enumerate(data["values"]):
        context = v["context"].encode()
        for recipient in v["recipients"]:
            try:
                plaintext, sender = share.open_shared(v["value"], keys[recipient], 2, context)
            except Exception as error:
                failures.append(f"value {index} for {recipient}: {error!r}")
                continue
            if plaintext != v["plaintext"].encode() or sender != share.identity(keys[v["sender"]])[3]:
                failures.append(f"value {index} for {recipient}: plaintext or sender differs")
        try:
            share.read_shared(v["value"], 2, context + b"-moved")
            failures.append(f"value {index}: verified for another context")
        except share.Outcome:
            pass
    for index, v in enumerate(data["groups"]):
        _, epoch, name, creator, members = share.read_group(v["text"])
        if (epoch, name.decode(), [m[0].decode() for m in members]) != (v["epoch"], v["name"], v["members"]) \
                or creator != share.identity(keys[v["creator"]])[3]:
            failures.append(f"group {index}: epoch, name, members or creator differs")
    return failures, len(data["identities"]) + len(data["values"]) + len(data["groups"])


def main():
    failures, total = [], 0
    with open(os.path.join(ROOT, "sharing/vectors.json")) as f:
        sharing_failures, sharing_total = check_sharing(json.load(f))
    total += sharing_total
    failures += [f"sharing/vectors.json: {failure}" for failure in sharing_failures]
    for path, check in (("keyfile/vectors.json", check_keyfiles), ("backup/vectors.json", check_backups),
                        ("shares/bundles.json", check_bundles), ("seal/vectors.json", check_seals)):
        with open(os.path.join(ROOT, path)) as f:
            vectors = json.load(f)["vectors"]
        total += len(vectors)
        failures += [f"{path}: {failure}" for failure in check(vectors)]
    for failure in failures:
        print("FAIL", failure, file=sys.stderr)
    print(f"format vectors: {total - len(failures)} of {total} give their stated outcome with the docs' reader", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
