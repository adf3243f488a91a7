#!/usr/bin/env python3
"""The bulk path against an earlier sealkit and libsodium from C, interleaved in one run, so both builds see the same machine load.

    Benchmarks/bulk_against.py EARLIER_SEALKIT SEALKIT SEALBENCH [REPS]

EARLIER_SEALKIT is a release build of an earlier commit (7435493, the commit before 1.0, is the one the bulk path's rewrite was measured against),
SEALKIT this one's, SEALBENCH Benchmarks/c/sealbench.c compiled (`sealbench lines KEYFILE`). Each case runs the
three peers in turn, REPS times (default 7), and reports the median CPU seconds (user + system, from wait4) and
the ratios: earlier ÷ this, and C ÷ this (above 1, this sealkit is faster). Each sealkit has a keystore of its
own holding one key, the same for all three peers.
"""
import base64
import os
import statistics
import subprocess
import sys
import tempfile


def cpu_seconds(command, stdin_path, environment):
    with open(stdin_path, "rb") as stdin, open(os.devnull, "wb") as devnull:
        process = subprocess.Popen(command, stdin=stdin, stdout=devnull, env=environment)
        _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bulk_against: {' '.join(command)} failed with status {os.waitstatus_to_exitcode(status)}")
    return usage.ru_utime + usage.ru_stime, usage.ru_stime


def lines(path, size, count):
    alphabet = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    block = bytes(alphabet[i % len(alphabet)] for i in range(size))
    with open(path, "wb") as out:
        for index in range(count):
            out.write(block[index % 7:] + block[:index % 7] + b"\n")


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    earlier, current, sealbench = (os.path.realpath(p) for p in sys.argv[1:4])
    reps = int(sys.argv[4]) if len(sys.argv) == 5 else 7
    work = tempfile.mkdtemp(prefix="sealkit-bulk-")
    key = base64.b64encode(os.urandom(32)).decode()
    key_file = os.path.join(work, "key")
    with open(key_file, "w") as out:
        out.write(key + "\n")
    environments = {}
    for name, binary in (("earlier", earlier), ("current", current)):
        environment = dict(os.environ, SEALKIT_HOME=os.path.join(work, name))
        environment.pop("SEALKIT_PASSPHRASE", None)
        subprocess.run([binary, "keys", "import", "bench"], input=key.encode(), env=environment, check=True,
                       stdout=subprocess.DEVNULL)
        environments[name] = environment
    cases = []
    for size, count in ((1048576, 96), (64, 200000)):
        values = os.path.join(work, f"values-{size}")
        lines(values, size, count)
        ciphertexts = os.path.join(work, f"ciphertexts-{size}")
        with open(values, "rb") as stdin, open(ciphertexts, "wb") as out:
            subprocess.run([current, "encrypt", "--lines", "--key", "bench"], stdin=stdin, stdout=out,
                           env=environments["current"], check=True)
        cases.append((f"encrypt --lines, {count} values of {size} B", values, "encrypt", True))
        cases.append((f"decrypt --lines, {count} values of {size} B", ciphertexts, "decrypt", False))
    print(f"{'case':44} {'earlier':>9} {'this':>9} {'C':>9}  earlier/this  C/this  (CPU s, median of {reps}; system s)")
    for title, stdin_path, operation, has_c in cases:
        peers = [("earlier", [earlier, operation, "--lines", "--key", "bench"], environments["earlier"]),
                 ("current", [current, operation, "--lines", "--key", "bench"], environments["current"])]
        if has_c:
            peers.append(("c", [sealbench, "lines", key_file], dict(os.environ)))
        for _, command, environment in peers:  # warm-up
            cpu_seconds(command, stdin_path, environment)
        times = {name: [] for name, _, _ in peers}
        system = {name: [] for name, _, _ in peers}
        for _ in range(reps):
            for name, command, environment in peers:
                total, sys_time = cpu_seconds(command, stdin_path, environment)
                times[name].append(total)
                system[name].append(sys_time)
        median = {name: statistics.median(values) for name, values in times.items()}
        median_system = {name: statistics.median(values) for name, values in system.items()}
        c = f"{median['c']:9.3f}" if "c" in median else f"{'-':>9}"
        c_ratio = f"{median['c'] / median['current']:6.2f}×" if "c" in median else f"{'-':>7}"
        print(f"{title:44} {median['earlier']:9.3f} {median['current']:9.3f} {c}  "
              f"{median['earlier'] / median['current']:11.2f}×  {c_ratio}  "
              f"(system {median_system['earlier']:.3f} / {median_system['current']:.3f})", flush=True)


if __name__ == "__main__":
    main()
