"""Paper backups (docs/transfer.md, "Paper backup") and share backup bundles ("Share backup"): the sealed
forms of a "Keys" bundle."""
import hashlib
import struct

import nacl.pwhash
import nacl.secret

from .codes import checked
from .keys import keys_bytes


def argon2id(passphrase, salt, ops, mem):
    return nacl.pwhash.argon2id.kdf(32, passphrase, salt, opslimit=ops, memlimit=mem)


def backup_plaintext(ids, created, version=1):
    """What a paper backup seals: its version byte, its created time, the keys."""
    return bytes([version]) + struct.pack(">q", created) + keys_bytes(ids)


def backup_body(key, ops, mem, salt, nonce, plaintext, byte_order=">"):
    """u64 opslimit, u64 memlimit (big-endian), salt, then secretbox's nonce, tag and sealed plaintext.
    `byte_order` "<" writes the limits the wrong way round, for a vector that must be refused."""
    return struct.pack(byte_order + "QQ", ops, mem) + salt + bytes(nacl.secret.SecretBox(key).encrypt(plaintext, nonce))


def ems_tag(ems):
    """The share bundle's tag: which encrypted master secret (the shares' EMS) it was made with."""
    return hashlib.blake2b(b"SealKit SLIP-39 encrypted secret tag v1", digest_size=16, key=ems.ciphertext).digest()


def shares_bundle(ids, secret, created, tag, nonce=None, version=1):
    """`sealkit-shares-v1:` with the bundle: version, tag, secretbox(created, keys) under the SLIP-39 secret,
    and its check. A nonce of None is libsodium's random one."""
    plaintext = struct.pack(">q", created) + keys_bytes(ids)
    box = nacl.secret.SecretBox(secret)
    sealed = bytes(box.encrypt(plaintext) if nonce is None else box.encrypt(plaintext, nonce))
    return checked("shares", 1, bytes([version]) + tag + sealed)
