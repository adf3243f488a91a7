#!/usr/bin/env python3
"""The PyNaCl peer for Scripts/bench: what a backend script would write.

  pynacl_peer.py ops SIZE KEYFILE      time encrypt/decrypt of a SIZE-byte value (JSON lines, ns/op
                                       per repetition, same warm-up and repetitions as the other peers)
  pynacl_peer.py lines KEYFILE         encrypt each stdin line to one stdout line, like
                                       `sealkit encrypt --lines`

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
    else:
        sys.exit("usage: pynacl_peer.py ops SIZE KEYFILE | pynacl_peer.py lines KEYFILE")
