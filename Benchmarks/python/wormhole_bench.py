"""Scripts/bench's network transfer section: one key through a local mailbox server, SealKit
against magic-wormhole's own Python client sending a text of the same size, in one run.

    wormhole_bench.py RELAY SEALKIT WORMHOLE KEYSTORE_FROM KEYSTORE_TO ID

Two timings per run, both wall clock, each a median of BENCH_REPS repetitions per round over
BENCH_ROUNDS rounds (peers alternating) after one warm-up each:
  send → receive exit   from the start of the sending process to the exit of the receiving one
                        (the latency a user waits for; the receiver already waits with its code)
  whole transfer        from the start of the first process (SealKit: receive, which allocates
                        the code; Python: `wormhole send --text`, which does) to the exit of the last
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

REPS = int(os.environ.get("BENCH_REPS", "3"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
TARGET = 3.0  # SealKit at most a third of Python's time


def sealkit_once(relay, sealkit, source, target_root, key_id):
    # A fresh receiving keystore each time, so every run imports (nothing is `unchanged`).
    shutil.rmtree(target_root, ignore_errors=True)
    env_to = dict(os.environ, SEALKIT_HOME=target_root)
    env_from = dict(os.environ, SEALKIT_HOME=source)
    first = time.perf_counter_ns()
    receiver = subprocess.Popen([sealkit, "transfer", "receive", "--format", "text", "--relay", relay],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env_to)
    code = receiver.stdout.readline().decode().strip()
    start = time.perf_counter_ns()
    sender = subprocess.run([sealkit, "transfer", "send", key_id, "--code", code, "--relay", relay],
                            capture_output=True, env=env_from)
    out, err = receiver.communicate()
    end = time.perf_counter_ns()
    if sender.returncode or receiver.returncode or b"imported" not in out:
        sys.exit(f"wormhole_bench: sealkit transfer failed: {sender.stderr!r} {err!r}")
    return end - start, end - first


def python_once(relay, wormhole, text):
    first = time.perf_counter_ns()
    sender = subprocess.Popen([wormhole, "--relay-url", relay, "send", "--hide-progress", "--no-qr", "--text", text],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    code = None
    lines = []
    while code is None:
        line = sender.stderr.readline().decode()
        if not line:
            sys.exit("wormhole_bench: wormhole send printed no code: " + "".join(lines))
        lines.append(line)
        match = re.search(r"Wormhole code is: (\S+)", line)
        code = match and match.group(1)
    start = time.perf_counter_ns()
    receiver = subprocess.run([wormhole, "--relay-url", relay, "receive", "--hide-progress"],
                              input=(code + "\n").encode(), capture_output=True)
    end_receive = time.perf_counter_ns()
    sender.communicate()
    end = time.perf_counter_ns()
    if receiver.returncode or sender.returncode or text.encode() not in receiver.stdout:
        sys.exit(f"wormhole_bench: wormhole transfer failed: {receiver.stderr!r}")
    return end_receive - start, end - first


def main():
    relay, sealkit, wormhole, source, target_root, key_id, size = sys.argv[1:8]
    text = "k" * int(size)
    samples = {"sealkit": ([], []), "python": ([], [])}
    sealkit_once(relay, sealkit, source, target_root, key_id)  # warm-up
    python_once(relay, wormhole, text)
    for _ in range(ROUNDS):
        for _ in range(REPS):
            a, b = sealkit_once(relay, sealkit, source, target_root, key_id)
            samples["sealkit"][0].append(a)
            samples["sealkit"][1].append(b)
        for _ in range(REPS):
            a, b = python_once(relay, wormhole, text)
            samples["python"][0].append(a)
            samples["python"][1].append(b)
    med = {peer: [statistics.median(s) / 1e6 for s in pair] for peer, pair in samples.items()}
    ratio = [med["python"][i] / med["sealkit"][i] for i in range(2)]
    print(json.dumps({"bench": "network transfer, one key", "size": int(size), "median_ms": med,
                      "ratio_python_over_sealkit": ratio, "samples_ns": samples}), file=sys.stderr)
    print()
    print("| network transfer, one key (%d-byte message), local mailbox server | SealKit | magic-wormhole (Python) | Python ÷ SealKit |" % int(size))
    print("|---|---|---|---|")
    for index, label in enumerate(["send start → receive exit", "whole transfer (first start → last exit)"]):
        mark = ("✓" if ratio[index] >= TARGET else "✗") + " (≥ 3)" if index == 0 else ""
        print(f"| {label} | {med['sealkit'][index]:.0f} ms | {med['python'][index]:.0f} ms | {ratio[index]:.1f} {mark} |")


if __name__ == "__main__":
    main()
