#!/usr/bin/env python3
"""The PyNaCl peer for Scripts/bench: what a backend script would write.

  pynacl_peer.py ops SIZE KEYFILE      time encrypt/decrypt of a SIZE-byte value (JSON lines, ns/op
                                       per repetition, same warm-up and repetitions as the other peers)
  pynacl_peer.py lines KEYFILE         encrypt each stdin line to one stdout line, like
                                       `sealkit encrypt --lines`
  pynacl_peer.py profile KEYFILE SCHEMA PROFILE
                                       time encrypting one profile's encrypted fields, JSON text in
                                       and out, like `ProfileProcessor.process(_:with:)` between parse and serialize
  pynacl_peer.py profile-ndjson KEYFILE SCHEMA
                                       the same for one profile per stdin line, like
                                       `sealkit profile encrypt --ndjson`

KEYFILE holds the key as standard base64 on its first line. Ciphertexts are
base64(nonce ‖ tag ‖ body), SealKit's and Rownd's wire format.
"""
import base64
import json
import sys
import time

from nacl.secret import SecretBox

WARMUP_NS = 200_000_000
REP_NS = 250_000_000
REPS = 7


def read_key(path):
    with open(path) as f:
        return base64.b64decode(f.readline().strip(), validate=True)


def encrypt(box, text):
    return base64.b64encode(box.encrypt(text.encode())).decode()


def decrypt(box, text):
    return box.decrypt(base64.b64decode(text, validate=True)).decode()


def measure(name, size, body, peer="pynacl", extra=None):
    """Warm up, size repetitions to REP_NS each, print every repetition's ns/op."""
    warm, spent = 0, 0
    while spent < WARMUP_NS:
        start = time.perf_counter_ns()
        body(1)
        spent += time.perf_counter_ns() - start
        warm += 1
    iterations = max(3, int(warm * REP_NS / spent))
    samples = []
    for _ in range(REPS):
        start = time.perf_counter_ns()
        body(iterations)
        samples.append(round((time.perf_counter_ns() - start) / iterations, 1))
    record = {"peer": peer, "bench": name, "size": size}
    record.update(extra or {})
    record.update({"iterations": iterations, "ns_per_op": samples})
    print(json.dumps(record), flush=True)


def ops(size, key_path):
    box = SecretBox(read_key(key_path))
    plaintext = "".join(chr(ord("a") + i % 26) for i in range(size))
    ciphertext = encrypt(box, plaintext)

    def run_encrypt(n):
        for _ in range(n):
            encrypt(box, plaintext)

    def run_decrypt(n):
        for _ in range(n):
            decrypt(box, ciphertext)

    measure("encrypt", size, run_encrypt)
    measure("decrypt", size, run_decrypt)


JSON_TYPES = {"string": str, "number": (int, float), "boolean": bool, "object": dict, "array": list}


def load_schema(path):
    """The encrypted fields and their types, from Rownd's app config."""
    with open(path) as f:
        fields = json.load(f)["app"]["schema"]
    return {name: field.get("type") for name, field in fields.items()
            if field.get("encryption", {}).get("state") == "enabled"}


def encrypt_profile(box, encrypted, text):
    """Strings encrypt as text, other values as their compact JSON, null stays null."""
    profile = json.loads(text)
    for name, kind in encrypted.items():
        value = profile.get(name)
        if value is None:
            continue
        if kind == "number" and isinstance(value, bool) or not isinstance(value, JSON_TYPES[kind]):
            raise ValueError(f"{name}: not a {kind}")
        plain = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        profile[name] = encrypt(box, plain)
    return json.dumps(profile, separators=(",", ":"), ensure_ascii=False)


def profile(key_path, schema_path, profile_path):
    box = SecretBox(read_key(key_path))
    encrypted = load_schema(schema_path)
    with open(profile_path) as f:
        text = json.dumps(json.load(f), separators=(",", ":"))

    def run(n):
        for _ in range(n):
            encrypt_profile(box, encrypted, text)

    measure("profile encrypt", 0, run)


def profile_ndjson(key_path, schema_path):
    box = SecretBox(read_key(key_path))
    encrypted = load_schema(schema_path)
    out = sys.stdout
    for line in sys.stdin:
        out.write(encrypt_profile(box, encrypted, line) + "\n")
    out.flush()


def lines(key_path):
    box = SecretBox(read_key(key_path))
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if line.endswith(b"\n"):
            line = line[:-1]
        line.decode()  # refuse non-UTF-8, as sealkit does
        out.write(base64.b64encode(box.encrypt(line)) + b"\n")
    out.flush()


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) == 3 and args[0] == "ops":
        ops(int(args[1]), args[2])
    elif len(args) == 2 and args[0] == "lines":
        lines(args[1])
    elif len(args) == 4 and args[0] == "profile":
        profile(args[1], args[2], args[3])
    elif len(args) == 3 and args[0] == "profile-ndjson":
        profile_ndjson(args[1], args[2])
    else:
        sys.exit(__doc__)
