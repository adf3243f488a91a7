"""Shared values, identities and group texts (docs/format.md, "Sharing"), from the docs alone: hashlib, hmac and
PyNaCl. age's envelope is written and read here too, so that Debian's `age` is a third, independent reader.

A key's identity: X25519 secret = crypto_kdf subkey 1 of context "sk-ident", Ed25519 seed = subkey 2.
"""
import base64
import hashlib
import hmac
import os
import struct

from nacl import bindings, signing

from . import Outcome
from .keys import subkey

IDENTITY_PREFIX = "sealkit-identity-v1:"
GROUP_PREFIX = "sealkit-group-v1:"
SHARED_PREFIX = "sk3:"
VALUE_LABEL = b"SealKit shared value v1\x00"
GROUP_LABEL = b"SealKit group v1\x00"
AGE_INTRO = b"age-encryption.org/v1\n"
CHUNK = 64 * 1024


def identity(key):
    """(x25519 secret, x25519 public, Ed25519 signing key, 64-byte public identity) of a 32-byte key."""
    secret = subkey(key, 1, b"sk-ident")
    seed = subkey(key, 2, b"sk-ident")
    public = bindings.crypto_scalarmult_base(secret)
    signer = signing.SigningKey(seed)
    return secret, public, signer, public + bytes(signer.verify_key)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if b64url(data) != text:
        raise Outcome("malformed")
    return data


def b64raw(data):
    return base64.b64encode(data).rstrip(b"=").decode()


def unb64raw(text):
    data = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    if b64raw(data) != text:
        raise Outcome("malformed")
    return data


def identity_text(public_identity):
    return IDENTITY_PREFIX + b64url(public_identity)


def read_identity(text):
    if not text.startswith(IDENTITY_PREFIX):
        raise Outcome("malformed")
    data = unb64url(text[len(IDENTITY_PREFIX):])
    if len(data) != 64:
        raise Outcome("malformed")
    return data


def safety_number(public_identity):
    """Six groups of five digits: BLAKE2b-240 keyed "SealKit identity fingerprint v1"; each five bytes BE mod 1e5."""
    digest = hashlib.blake2b(public_identity, digest_size=30, key=b"SealKit identity fingerprint v1").digest()
    return " ".join("%05d" % (int.from_bytes(digest[i:i + 5], "big") % 100000) for i in range(0, 30, 5))


def bech32_secret(secret):
    """age's identity text, AGE-SECRET-KEY-1…: Bech32 (BIP 173) of the X25519 secret, upper case."""
    charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
    hrp = "age-secret-key-"
    data, acc, bits = [], 0, 0
    for byte in secret:
        acc = (acc << 8) | byte
        bits += 8
        while bits >= 5:
            bits -= 5
            data.append((acc >> bits) & 31)
    if bits:
        data.append((acc << (5 - bits)) & 31)

    def polymod(values):
        gen = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
        chk = 1
        for value in values:
            top = chk >> 25
            chk = (chk & 0x1FFFFFF) << 5 ^ value
            for i in range(5):
                chk ^= gen[i] if ((top >> i) & 1) else 0
        return chk

    expanded = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    checksum = polymod(expanded + data + [0] * 6) ^ 1
    data += [(checksum >> 5 * (5 - i)) & 31 for i in range(6)]
    return (hrp + "1" + "".join(charset[d] for d in data)).upper()


def hkdf(secret, salt, info, length=32):
    prk = hmac.new(salt if salt else bytes(32), secret, hashlib.sha256).digest()
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out += block
        counter += 1
    return out[:length]


def stream_nonce(index, last):
    return index.to_bytes(11, "big") + (b"\x01" if last else b"\x00")


def age_seal(plaintext, recipients):
    file_key = os.urandom(16)
    header = AGE_INTRO
    for recipient in recipients:
        ephemeral = os.urandom(32)
        share = bindings.crypto_scalarmult_base(ephemeral)
        shared = bindings.crypto_scalarmult(ephemeral, recipient)
        wrap = hkdf(shared, share + recipient, b"age-encryption.org/v1/X25519")
        body = bindings.crypto_aead_chacha20poly1305_ietf_encrypt(file_key, None, bytes(12), wrap)
        header += b"-> X25519 " + b64raw(share).encode() + b"\n" + b64raw(body).encode() + b"\n"
    header += b"---"
    mac = hmac.new(hkdf(file_key, b"", b"header"), header, hashlib.sha256).digest()
    header += b" " + b64raw(mac).encode() + b"\n"
    nonce = os.urandom(16)
    key = hkdf(file_key, nonce, b"payload")
    chunks = [plaintext[i:i + CHUNK] for i in range(0, len(plaintext), CHUNK)] or [b""]
    payload = b"".join(
        bindings.crypto_aead_chacha20poly1305_ietf_encrypt(chunk, None, stream_nonce(i, i == len(chunks) - 1), key)
        for i, chunk in enumerate(chunks))
    return header + nonce + payload


def age_open(data, secret, public):
    if not data.startswith(AGE_INTRO):
        raise Outcome("malformed")
    lines, at = [], len(AGE_INTRO)
    while True:
        end = data.index(b"\n", at)
        line = data[at:end]
        if line.startswith(b"--- "):
            macked, mac, payload = data[:at + 3], unb64raw(line[4:].decode()), data[end + 1:]
            break
        lines.append(line)
        at = end + 1
    stanzas = []
    for i in range(0, len(lines), 2):
        words = lines[i].split(b" ")
        if len(words) != 3 or words[:2] != [b"->", b"X25519"]:
            raise Outcome("malformed")
        stanzas.append((unb64raw(words[2].decode()), unb64raw(lines[i + 1].decode())))
    for share, body in stanzas:
        wrap = hkdf(bindings.crypto_scalarmult(secret, share), share + public, b"age-encryption.org/v1/X25519")
        try:
            file_key = bindings.crypto_aead_chacha20poly1305_ietf_decrypt(body, None, bytes(12), wrap)
        except Exception:
            continue
        if not hmac.compare_digest(hmac.new(hkdf(file_key, b"", b"header"), macked, hashlib.sha256).digest(), mac):
            raise Outcome("tampered")
        key = hkdf(file_key, payload[:16], b"payload")
        rest, out, index = payload[16:], b"", 0
        while True:
            last = len(rest) <= CHUNK + 16
            chunk, rest = rest[:CHUNK + 16], rest[CHUNK + 16:]
            out += bindings.crypto_aead_chacha20poly1305_ietf_decrypt(chunk, None, stream_nonce(index, last), key)
            if last:
                return out, len(stanzas)
            index += 1
    raise Outcome("not-addressed")


def place_encoding(owner, kind, name):
    """v2's: u32be(len id) || id || kind (1 field, 2 context) || u32be(len place) || place."""
    return struct.pack(">I", len(owner)) + owner + bytes([kind]) + struct.pack(">I", len(name)) + name


def seal_shared(plaintext, sender_key, recipients, owner, kind, name, group=None):
    """An sk3 value from `sender_key` (32 bytes) for the 64-byte identities `recipients` and the sender's own."""
    _, public, signer, sender = identity(sender_key)
    agreements = []
    for x in [public] + [r[:32] for r in recipients]:
        if x not in agreements:
            agreements.append(x)
    envelope = age_seal(plaintext, agreements)
    body = b"\x03" + sender + struct.pack(">H", len(owner)) + owner
    body += b"\x00" if group is None else b"\x01" + group[0] + struct.pack(">I", group[1])
    body += struct.pack(">I", len(envelope)) + envelope
    body += signer.sign(VALUE_LABEL + place_encoding(owner, kind, name) + body).signature
    return SHARED_PREFIX + base64.b64encode(body).decode()


def read_shared(text, kind, name):
    """(sender identity, owner, group or None, envelope) of an sk3 value, its signature checked for the place."""
    if not text.startswith(SHARED_PREFIX):
        raise Outcome("malformed")
    body = base64.b64decode(text[len(SHARED_PREFIX):], validate=True)
    if body[0] != 3:
        raise Outcome("malformed")
    sender = body[1:65]
    (owner_length,) = struct.unpack(">H", body[65:67])
    at = 67 + owner_length
    owner = body[67:at]
    group = None
    if body[at] == 1:
        group = (body[at + 1:at + 17], struct.unpack(">I", body[at + 17:at + 21])[0])
        at += 21
    else:
        at += 1
    (length,) = struct.unpack(">I", body[at:at + 4])
    envelope = body[at + 4:at + 4 + length]
    signed, signature = body[:at + 4 + length], body[at + 4 + length:]
    if len(signature) != 64:
        raise Outcome("malformed")
    try:
        signing.VerifyKey(sender[32:]).verify(VALUE_LABEL + place_encoding(owner, kind, name) + signed, signature)
    except Exception:
        raise Outcome("tampered")
    return sender, owner, group, envelope


def open_shared(text, key, kind, name):
    """(plaintext, sender identity) for the recipient holding `key`."""
    sender, _, _, envelope = read_shared(text, kind, name)
    secret, public, _, _ = identity(key)
    plaintext, _ = age_open(envelope, secret, public)
    return plaintext, sender


def make_group(creator_key, creator_label, group_id, epoch, name, members):
    """A group text: `members` is [(label bytes, 64-byte identity)], the creator put first."""
    _, _, signer, creator = identity(creator_key)
    everyone = [(creator_label, creator)] + [m for m in members if m[1] != creator]
    body = b"\x01" + group_id + struct.pack(">I", epoch) + struct.pack(">H", len(name)) + name + creator
    body += struct.pack(">H", len(everyone))
    for label, member in everyone:
        body += struct.pack(">H", len(label)) + label + member
    body += signer.sign(GROUP_LABEL + body).signature
    return GROUP_PREFIX + b64url(body)


def read_group(text):
    """(group id, epoch, name, creator, [(label, identity)]) of a group text, its signature checked."""
    if not text.startswith(GROUP_PREFIX):
        raise Outcome("malformed")
    body = unb64url(text[len(GROUP_PREFIX):])
    group_id, (epoch,) = body[1:17], struct.unpack(">I", body[17:21])
    (length,) = struct.unpack(">H", body[21:23])
    name, at = body[23:23 + length], 23 + length
    creator, (count,) = body[at:at + 64], struct.unpack(">H", body[at + 64:at + 66])
    at += 66
    members = []
    for _ in range(count):
        (length,) = struct.unpack(">H", body[at:at + 2])
        members.append((body[at + 2:at + 2 + length], body[at + 2 + length:at + 66 + length]))
        at += 66 + length
    try:
        signing.VerifyKey(creator[32:]).verify(GROUP_LABEL + body[:at], body[at:])
    except Exception:
        raise Outcome("tampered")
    return group_id, epoch, name, creator, members
