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

Run: python3 Scripts/check-format-vectors.py   (exit 0 when every vector gives its outcome)
"""
import base64
import hashlib
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

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures")
LATEST = 253402300799  # 9999-12-31T23:59:59Z
OPS = (nacl.pwhash.argon2id.OPSLIMIT_MIN, nacl.pwhash.argon2id.OPSLIMIT_SENSITIVE)
MEM = (nacl.pwhash.argon2id.MEMLIMIT_MIN, nacl.pwhash.argon2id.MEMLIMIT_SENSITIVE)


class Outcome(Exception):
    """A refusal, named as the vectors name it."""


def fingerprint(key):
    return hashlib.blake2b(key, digest_size=8, key=b"SealKit key fingerprint v1").digest()


def b64_strict(text):
    """Standard base64 with padding, canonical: no whitespace, no other alphabet, no stray bits."""
    if len(text) % 4 or not re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", text):
        return None
    try:
        data = base64.b64decode(text, validate=True)
    except ValueError:
        return None
    return data if base64.b64encode(data).decode() == text else None


def b64url_strict(text):
    """Unpadded base64url, canonical."""
    if len(text) % 4 == 1 or not re.fullmatch(r"[A-Za-z0-9_-]*", text):
        return None
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    return data if base64.urlsafe_b64encode(data).decode().rstrip("=") == text else None


def valid_id(name):
    if not 1 <= len(name.encode()) <= 255 or name in (".", "..") or "/" in name:
        return False
    return not any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs") for c in name)


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
        if hashlib.blake2b(b"SealKit key file passphrase check v2", digest_size=16, key=sealing).digest() != check:
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


def file_name(key_id):
    return hashlib.blake2b(key_id.encode(), digest_size=20, key=b"SealKit key id v1 ").hexdigest() + ".key"


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
            if key_id != v["id"] or file_name(key_id) != v["file_name"] or keys_of(keys) != v["keys"]:
                failures.append(f"{v['name']}: opened other keys or id than the vector states")
    return failures


def keys_of(keys):
    return [{"key": base64.b64encode(k).decode(),
             "fingerprint": ":".join(fingerprint(k).hex()[i:i + 4] for i in range(0, 16, 4)),
             "created": c, "retired": r} for k, c, r in keys]


# MARK: Text codes, parts, keys

def join_parts(lines):
    lines = [line.strip() for line in lines if line.strip()]
    if len(lines) == 1 and not lines[0].startswith("sealkit-part-v1:"):
        return lines[0]
    pieces, count, transfer = {}, None, None
    for line in lines:
        match = re.fullmatch(r"sealkit-part-v1:([A-Za-z0-9_-]{12}):([1-9][0-9]*)/([1-9][0-9]*):([A-Za-z0-9_:-]+)", line)
        if not match or not 2 <= int(match[3]) <= 99 or not 1 <= int(match[2]) <= int(match[3]):
            raise Outcome("malformed")
        if transfer not in (None, match[1]) or count not in (None, int(match[3])):
            raise Outcome("parts-from-two-transfers")
        transfer, count = match[1], int(match[3])
        if int(match[2]) in pieces:
            raise Outcome("duplicate-part")
        pieces[int(match[2])] = match[4]
    if count is None or len(pieces) != count:
        raise Outcome("missing-parts")
    whole = "".join(pieces[i] for i in range(1, count + 1))
    digest = hashlib.blake2b(b"SealKit transfer parts v1" + whole.encode(), digest_size=16).digest()[:9]
    if base64.urlsafe_b64encode(digest).decode() != transfer:
        raise Outcome("parts-do-not-fit")
    return whole


def code_body(text, kind):
    prefix = f"sealkit-{kind}-v1:"
    if not text.startswith(prefix):
        raise Outcome("unsupported-version" if text.startswith(f"sealkit-{kind}-v") else "malformed")
    body = b64url_strict(text[len(prefix):])
    if body is None:
        raise Outcome("malformed")
    return body


def read_keys(data):
    """docs/transfer.md, "Keys": returns [(id, [(key, created, retired)])] and what is left over."""
    def take(n):
        nonlocal data
        if len(data) < n:
            raise Outcome("malformed")
        out, data = data[:n], data[n:]
        return out
    count = struct.unpack(">H", take(2))[0]
    if not 1 <= count <= 4096:
        raise Outcome("malformed")
    ids, seen, total = [], set(), 0
    for _ in range(count):
        try:
            name = take(take(1)[0]).decode()
        except UnicodeDecodeError:
            raise Outcome("malformed")
        name = unicodedata.normalize("NFC", name)  # an id in another form is read as its NFC form
        if not valid_id(name) or name in seen:
            raise Outcome("malformed")
        seen.add(name)
        versions = take(1)[0]
        total += versions
        if versions == 0 or total > 4096:
            raise Outcome("malformed")
        keys = []
        for index in range(versions):
            key, mark = take(32), take(8)
            created, retired = struct.unpack(">qq", take(16))
            if fingerprint(key) != mark or (index == 0) != (retired == 0):
                raise Outcome("malformed")
            if not (0 <= created <= LATEST and 0 <= retired <= LATEST):
                raise Outcome("malformed")
            keys.append((key, created, None if retired == 0 else retired))
        ids.append((name, keys))
    return ids, data


def read_dated_keys(plaintext):
    created = struct.unpack(">q", plaintext[:8])[0] if len(plaintext) >= 8 else None
    if created is None or not 0 <= created <= LATEST:
        raise Outcome("malformed")
    ids, rest = read_keys(plaintext[8:])
    if rest:
        raise Outcome("malformed")
    return created, ids


def expected(ids):
    return [{"id": name, "versions": keys_of(keys)} for name, keys in ids]


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


def split_parts(code):
    if len(code) <= 1200:
        return [code]
    count = -(-len(code) // 1165)
    size = -(-len(code) // count)
    digest = hashlib.blake2b(b"SealKit transfer parts v1" + code.encode(), digest_size=16).digest()[:9]
    transfer = base64.urlsafe_b64encode(digest).decode()
    return [f"sealkit-part-v1:{transfer}:{i + 1}/{count}:{code[i * size:(i + 1) * size]}" for i in range(count)]


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
    if hashlib.blake2b(b"SealKit shares v2 check" + body, digest_size=16).digest()[:4] != check:
        raise Outcome("malformed")
    if len(body) <= 1 + 16 + 40 or body[0] != 1:
        raise Outcome("malformed")
    try:
        plaintext = nacl.secret.SecretBox(secret).decrypt(body[17:])
    except nacl.exceptions.CryptoError:
        tag = hashlib.blake2b(b"SealKit SLIP-39 encrypted secret tag v1", digest_size=16, key=ems.ciphertext).digest()
        raise Outcome("wrong-passphrase" if tag == body[1:17] else "other-backup")
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
        if value is None:
            entries.append((name, b"\x00"))
        elif isinstance(value, str):
            entries.append((name, b"\x01" + struct.pack(">I", len(value.encode())) + value.encode()))
        else:
            raise Outcome("seal-mismatch")
    entries.sort()
    message = bytes([fmt]) + tag + body[9:17] + struct.pack(">I", len(user)) + user
    if fmt == 2:
        message += bytes([1 if in_data else 0])
    message += struct.pack(">I", len(entries))
    for name, value in entries:
        message += struct.pack(">I", len(name)) + name + value
    subkey = hashlib.blake2b(b"", digest_size=32, key=key, salt=struct.pack("<Q", 1) + bytes(8),
                             person=b"sksealv1" + bytes(8)).digest()
    expected = hashlib.blake2b(message, digest_size=32, key=subkey).digest()
    if not sodium.sodium_memcmp(expected, mac):
        raise Outcome("seal-mismatch")
    remembered = v["remembered"]
    if remembered is not None:
        if version < remembered["version"]:
            raise Outcome("older")
        if version == remembered["version"] and bytes.fromhex(remembered["mac"]) != mac:
            raise Outcome("conflicting")
    return version


def main():
    failures, total = [], 0
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
