"""Key fingerprints and the "Keys" bundle (docs/transfer.md, "Keys") that backups, share bundles, offline
replies and network transfers carry."""
import base64
import hashlib
import struct
import unicodedata

from . import Outcome

LATEST = 253402300799  # 9999-12-31T23:59:59Z, the last time a key's dates may hold


def fingerprint(key):
    """The key tag: BLAKE2b with an 8-byte output over the key, keyed with SealKit's label."""
    return hashlib.blake2b(key, digest_size=8, key=b"SealKit key fingerprint v1").digest()


def fingerprint_text(key):
    """The fingerprint as people see it: four groups of four lower-case hex digits joined by colons."""
    text = fingerprint(key).hex()
    return ":".join(text[i:i + 4] for i in range(0, 16, 4))


def subkey(key, subkey_id, context):
    """libsodium's crypto_kdf_derive_from_key(32, id, context, key) (BLAKE2b): salt = LE64(id) || 0^8,
    personal = context (8 bytes) || 0^8."""
    return hashlib.blake2b(b"", digest_size=32, key=key, salt=struct.pack("<Q", subkey_id) + bytes(8),
                           person=context + bytes(8)).digest()


def valid_id(name):
    if not 1 <= len(name.encode()) <= 255 or name in (".", "..") or "/" in name:
        return False
    return not any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs") for c in name)


def describe(ids):
    """The keys as the vectors state what a reader must restore: per id, each version's key (base64), fingerprint
    as shown, created and retired (null: current)."""
    return [{"id": name, "versions": [{"key": base64.b64encode(key).decode(), "fingerprint": fingerprint_text(key),
                                       "created": created, "retired": retired} for key, created, retired in versions]}
            for name, versions in ids]


def keys_bytes(ids):
    """`ids` is [(id, [(key, created, retired or None), ...]), ...], the current key first.
    u16 id count; per id: u8 length, id, u8 version count; per version key, fingerprint, created, retired (0: current)."""
    out = struct.pack(">H", len(ids))
    for name, versions in ids:
        raw = name.encode()
        out += bytes([len(raw)]) + raw + bytes([len(versions)])
        for key, created, retired in versions:
            out += key + fingerprint(key) + struct.pack(">qq", created, retired or 0)
    return out


def read_keys(data):
    """Reads a "Keys" bundle: returns [(id, [(key, created, retired or None)])] and what is left over, or
    raises Outcome("malformed")."""
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
    """A created time (i64) then a "Keys" bundle and nothing else: returns (created, ids)."""
    created = struct.unpack(">q", plaintext[:8])[0] if len(plaintext) >= 8 else None
    if created is None or not 0 <= created <= LATEST:
        raise Outcome("malformed")
    ids, rest = read_keys(plaintext[8:])
    if rest:
        raise Outcome("malformed")
    return created, ids


# Key files (docs/format.md, "Key file")

def key_file_name(key_id):
    """A keystore's file for an id: a keyed BLAKE2b of the id's UTF-8, so the name shows nothing of the id."""
    return hashlib.blake2b(key_id.encode(), digest_size=20, key=b"SealKit key id v1 ").hexdigest() + ".key"


def passphrase_check(sealing_key):
    """A protected key file's `check` value: tells a wrong passphrase from a damaged file."""
    return hashlib.blake2b(b"SealKit key file passphrase check v2", digest_size=16, key=sealing_key).digest()
