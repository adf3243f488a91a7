#!/usr/bin/env python3
# Python: python-spake2, PyNaCl and `cryptography` are what magic-wormhole itself runs on: the peer
# implementation the vectors must come from.
"""Generates Fixtures/pake/vectors.json with python-spake2, PyNaCl and the `cryptography`
package: implementations independent of SealKit, the ones magic-wormhole itself runs on.

What it pins, for Tests/SealKitTransferTests/Mailbox/PAKEVectorTests.swift:
  hkdf            RFC 5869's SHA-256 cases (checked here against `cryptography`) and more
  blinding        python-spake2's symmetric element S = arbitrary_element(b"symmetric")
  password_scalar python-spake2's password_to_scalar, little-endian as libsodium wants it
  exchanges       SPAKE2_Symmetric with FIXED entropy: both messages and both final keys,
                  for several passwords and identities (the app id sealkit/key-transfer/v1
                  among them), and with different passwords (keys differ)
  bad_messages    peer messages python-spake2 refuses too, each with the reason
  derive_key, phase_key, verifier   magic-wormhole's key schedule (wormhole._key)
  secretbox       magic-wormhole's encrypt_data with a fixed nonce (PyNaCl), nonce || box
  wordlist        SHA-256 of magic-wormhole's PGP word lists, lower case, even then odd

Run: python3 Scripts/make-spake2-vectors.py   (writes the file; needs no setup)
It makes a virtual environment .venv-vectors (gitignored) with spake2, PyNaCl and
magic-wormhole the first time, and runs itself there. Deterministic: the same file every run.
"""
import hashlib
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, ".venv-vectors")
OUT = os.path.join(ROOT, "Fixtures", "pake", "vectors.json")

try:
    import nacl.secret
    import spake2
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
    from wormhole import _key, _wordlist
except ImportError:
    if os.environ.get("SEALKIT_VECTORS_VENV"):
        raise
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
    subprocess.check_call([python, "-m", "pip", "install", "-q", "spake2==0.9", "pynacl", "magic-wormhole"])
    os.environ["SEALKIT_VECTORS_VENV"] = "1"
    os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])

from spake2 import SPAKE2_Symmetric
from spake2.parameters.ed25519 import ParamsEd25519

APP_ID = b"sealkit/key-transfer/v1"
GROUP = ParamsEd25519.group


def hx(data):
    return data.hex()


def hkdf(ikm, salt, info, length):
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=salt, info=info).derive(ikm)


def fixed_entropy(label):
    """Deterministic stand-in for os.urandom: SHA-512 of a label, as long as asked."""
    stream = b""
    counter = 0
    while len(stream) < 64:
        stream += hashlib.sha512(b"%s/%d" % (label, counter)).digest()
        counter += 1
    state = {"used": 0}

    def entropy(count):
        assert state["used"] == 0 and count == 64, "python-spake2 asks for 64 bytes once"
        state["used"] = count
        return stream[:count]
    return stream[:64], entropy


vectors = {"note": "Made by Scripts/make-spake2-vectors.py with python-spake2 "
                   + spake2.__version__ + ", PyNaCl and magic-wormhole; do not edit."}

# RFC 5869 Appendix A, SHA-256 cases 1-3, checked against `cryptography` before they are written.
rfc = [
    ("rfc5869-case1", "0b" * 22, "000102030405060708090a0b0c", "f0f1f2f3f4f5f6f7f8f9", 42,
     "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"),
    ("rfc5869-case2", bytes(range(0x00, 0x50)).hex(), bytes(range(0x60, 0xb0)).hex(),
     bytes(range(0xb0, 0x100)).hex(), 82,
     "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09"
     "da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87"),
    ("rfc5869-case3", "0b" * 22, "", "", 42,
     "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"),
]
vectors["hkdf"] = []
for name, ikm, salt, info, length, okm in rfc:
    assert hkdf(bytes.fromhex(ikm), bytes.fromhex(salt) or None, bytes.fromhex(info), length).hex() == okm, name
    vectors["hkdf"].append({"name": name, "ikm": ikm, "salt": salt, "info": info, "length": length, "okm": okm})
for name, ikm, salt, info, length in [
    ("spake2-password-expansion", b"7-guitarist-revenge", b"", b"SPAKE2 pw", 48),
    ("long-output-255-blocks", b"k" * 32, None, b"long", 255 * 32),
    ("one-byte", b"\x00", None, b"", 1),
    ("long-salt-hashed-first", b"ikm", b"s" * 100, b"info", 64),
]:
    vectors["hkdf"].append({"name": name, "ikm": hx(ikm), "salt": hx(salt or b""), "info": hx(info),
                            "length": length, "okm": hx(hkdf(ikm, salt, info, length))})

vectors["blinding"] = hx(ParamsEd25519.S.to_bytes())
assert vectors["blinding"] == hx(GROUP.arbitrary_element(b"symmetric").to_bytes())

passwords = [b"", b"7-guitarist-revenge", b"1-adroitness-aardvark", b"password",
             "99-\u00e9t\u00e9".encode("utf-8"), b"x" * 200]
vectors["password_scalar"] = [
    {"password": hx(pw), "scalar": hx(GROUP.scalar_to_bytes(GROUP.password_to_scalar(pw)))} for pw in passwords]

exchanges = [
    ("app-id", b"7-guitarist-revenge", b"7-guitarist-revenge", APP_ID),
    ("app-id-other-code", b"42-tumor-surrender", b"42-tumor-surrender", APP_ID),
    ("empty-identity", b"3-scallion-tycoon", b"3-scallion-tycoon", b""),
    ("empty-password", b"", b"", APP_ID),
    ("other-identity", b"7-guitarist-revenge", b"7-guitarist-revenge", b"lothar.com/wormhole/text-or-file-xfer"),
    ("wrong-password", b"7-guitarist-revenge", b"7-guitarist-revolver", APP_ID),
    ("wrong-nameplate", b"7-guitarist-revenge", b"8-guitarist-revenge", APP_ID),
]
vectors["exchanges"] = []
for name, pw_a, pw_b, ident in exchanges:
    seed_a, entropy_a = fixed_entropy(b"a/" + name.encode())
    seed_b, entropy_b = fixed_entropy(b"b/" + name.encode())
    a = SPAKE2_Symmetric(pw_a, idSymmetric=ident, entropy_f=entropy_a)
    b = SPAKE2_Symmetric(pw_b, idSymmetric=ident, entropy_f=entropy_b)
    msg_a, msg_b = a.start(), b.start()
    key_a, key_b = a.finish(msg_b), b.finish(msg_a)
    assert (key_a == key_b) == (pw_a == pw_b), name
    vectors["exchanges"].append({
        "name": name, "identity": hx(ident), "password_a": hx(pw_a), "password_b": hx(pw_b),
        "entropy_a": hx(seed_a), "entropy_b": hx(seed_b), "message_a": hx(msg_a), "message_b": hx(msg_b),
        "key_a": hx(key_a), "key_b": hx(key_b), "keys_match": key_a == key_b})

# Peer messages SealKit refuses. python_refuses records what python-spake2 does with each: it
# refuses them all but one with extra bytes at the end, which it ignores (SealKit is stricter).
good = bytes.fromhex(vectors["exchanges"][0]["message_b"])
p = 2**255 - 19
small_order = bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")  # order 8
bad = [
    ("empty", b"", "wrongLength"),
    ("short", good[:32], "wrongLength"),
    ("long", good + b"\x00", "wrongLength"),
    ("side-a", b"A" + good[1:], "wrongSide"),
    ("side-b", b"B" + good[1:], "wrongSide"),
    ("side-zero", b"\x00" + good[1:], "wrongSide"),
    ("identity", b"S" + (1).to_bytes(32, "little"), "invalidElement"),
    ("order-2", b"S" + (p - 1).to_bytes(32, "little"), "invalidElement"),
    ("order-8", b"S" + small_order, "invalidElement"),
    ("not-on-curve", b"S" + (2).to_bytes(32, "little"), "invalidElement"),
    ("mixed-order", None, "invalidElement"),
]
vectors["bad_messages"] = []
for name, message, expect in bad:
    if message is None:
        # A prime-order element plus a point of order 8: on the curve, outside the subgroup.
        from spake2 import ed25519_basic as eb
        element = eb.bytes_to_element(good[1:])
        torsion = eb.bytes_to_unknown_group_element(small_order)
        message = b"S" + element.add(torsion).to_bytes()
    peer = SPAKE2_Symmetric(b"7-guitarist-revenge", idSymmetric=APP_ID, entropy_f=fixed_entropy(b"bad")[1])
    peer.start()
    try:
        peer.finish(message)
        python_refuses = False
    except Exception:  # python-spake2 raises ValueError, OffSides, or asserts on an unknown side byte
        python_refuses = True
    vectors["bad_messages"].append({"name": name, "message": hx(message), "expect": expect,
                                    "python_refuses": python_refuses})

master = bytes.fromhex(vectors["exchanges"][0]["key_a"])
vectors["derive_key"] = [
    {"key": hx(master), "purpose": hx(purpose), "okm": hx(_key.derive_key(master, purpose))}
    for purpose in [b"wormhole:verifier", b"", b"sealkit:offline:reply", b"p" * 300]]
vectors["phase_key"] = [
    {"key": hx(master), "side": side, "phase": phase, "okm": hx(_key.derive_phase_key(master, side, phase))}
    for side, phase in [("0123456789abcdef", "pake"), ("0123456789abcdef", "version"), ("fedcba9876543210", "0"),
                        ("", ""), ("abcdef0123456789", "1")]]
vectors["verifier"] = {"key": hx(master), "verifier": hx(_key.derive_key(master, b"wormhole:verifier"))}

vectors["secretbox"] = []
for phase, plaintext in [("version", b'{"app_versions": {}}'), ("0", b""), ("1", bytes(range(256)) * 3)]:
    phase_key = _key.derive_phase_key(master, "0123456789abcdef", phase)
    nonce = hashlib.sha256(b"nonce/" + phase.encode()).digest()[:24]
    sealed = bytes(nacl.secret.SecretBox(phase_key).encrypt(plaintext, nonce))
    assert _key.decrypt_data(phase_key, sealed) == plaintext
    vectors["secretbox"].append({"key": hx(phase_key), "nonce": hx(nonce), "plaintext": hx(plaintext),
                                 "sealed": hx(sealed)})

even = [words[0].lower() for _, words in sorted(_wordlist.raw_words.items())]
odd = [words[1].lower() for _, words in sorted(_wordlist.raw_words.items())]
vectors["wordlist"] = {"sha256_even_then_odd": hashlib.sha256("\n".join(even + odd).encode()).hexdigest(),
                       "even_0": even[0], "odd_0": odd[0], "even_255": even[255], "odd_255": odd[255]}

os.makedirs(os.path.dirname(OUT), exist_ok=True)
with open(OUT, "w") as f:
    json.dump(vectors, f, indent=1, sort_keys=True)
    f.write("\n")
print("wrote " + os.path.relpath(OUT, ROOT), file=sys.stderr)
