#!/usr/bin/env python3
"""Scripts/bench's helpers: time whole processes, generate inputs, build the report.

  harness.py time PEER BENCH SIZE COUNT STDIN -- CMD...
      Runs CMD once to warm up, then REPS times with STDIN as its input and its output
      discarded; prints one JSON line with ns per item (COUNT items per run) for every
      repetition and the largest peak RSS seen.
  harness.py lines SIZE COUNT OUT       COUNT lines of SIZE printable ASCII bytes
  harness.py profiles PROFILE COUNT OUT COUNT copies of PROFILE as ndjson, each with its own user_id
  harness.py audit-ndjson CIPHERTEXTS OUT
                                        profiles of four encrypted fields each, from a file of one
                                        ciphertext per line (made by `sealkit encrypt --lines`)
  harness.py audit-copies CIPHERTEXTS OUT
                                        1,000,000 values in the same shape, 250,000 of them copies
  harness.py report RESULTS [--json PATH]
      Medians and ratios (peer time / SealKit time: above 1 means SealKit is faster),
      checked against the performance targets the report prints beside each ratio.
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import time

REPS = int(os.environ.get("BENCH_REPS", "3"))


def time_process(peer, bench, size, count, stdin_path, command):
    def run():
        with open(stdin_path, "rb") as stdin, open(os.devnull, "wb") as devnull:
            start = time.perf_counter_ns()
            process = subprocess.Popen(command, stdin=stdin, stdout=devnull)
            _, status, usage = os.wait4(process.pid, 0)
            elapsed = time.perf_counter_ns() - start
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"harness: {' '.join(command)} failed with status {os.waitstatus_to_exitcode(status)}")
        return elapsed, usage.ru_maxrss  # ru_maxrss is in KiB on Linux

    run()  # warm-up: page cache, dynamic linking, CPU frequency
    samples, peak = [], 0
    for _ in range(REPS):
        elapsed, rss = run()
        samples.append(round(elapsed / count, 1))
        peak = max(peak, rss)
    print(json.dumps({"peer": peer, "bench": bench, "size": size, "iterations": count,
                      "ns_per_op": samples, "peak_rss_kib": peak}), flush=True)


def generate_lines(size, count, out_path):
    alphabet = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,-"
    line = bytes(alphabet[(i * 7) % len(alphabet)] for i in range(size)) + b"\n"
    with open(out_path, "wb") as f:
        chunk = line * max(1, (1 << 20) // len(line))
        per_chunk = chunk.count(b"\n")
        written = 0
        while written + per_chunk <= count:
            f.write(chunk)
            written += per_chunk
        f.write(line * (count - written))


def generate_profiles(profile_path, count, out_path):
    with open(profile_path) as f:
        profile = json.load(f)
    with open(out_path, "w") as out:
        for index in range(count):
            profile["user_id"] = f"user_{index:026d}"
            out.write(json.dumps(profile, separators=(",", ":")) + "\n")


def generate_audit_ndjson(ciphertexts_path, out_path):
    with open(ciphertexts_path) as f, open(out_path, "w") as out:
        values = (line.rstrip("\n") for line in f)
        for index, (ssn, dob, notes, card) in enumerate(zip(values, values, values, values)):
            out.write(f'{{"user_id":"user_{index}","ssn":"{ssn}","date_of_birth":"{dob}",'
                      f'"notes":"{notes}","card":"{card}"}}\n')


def generate_audit_copies(ciphertexts_path, out_path, values=1_000_000, copies=250_000):
    """`values` values, four per profile, of which `copies` repeat earlier ones: the distinct
    ciphertexts first, then whole profiles copied from the start of the file, so that every first
    sighting must be remembered to the end (the audit's worst case for memory)."""
    with open(ciphertexts_path) as f:
        distinct = [line.rstrip("\n") for _, line in zip(range(values - copies), f)]
    profiles = [distinct[i:i + 4] for i in range(0, len(distinct), 4)]
    with open(out_path, "w") as out:
        for index, (ssn, dob, notes, card) in enumerate(profiles + profiles[:copies // 4]):
            out.write(f'{{"user_id":"user_{index}","ssn":"{ssn}","date_of_birth":"{dob}",'
                      f'"notes":"{notes}","card":"{card}"}}\n')


# ---------------------------------------------------------------- report

def size_label(size):
    if size >= 1 << 20 and size % (1 << 20) == 0:
        return f"{size >> 20} MiB"
    if size >= 1024 and size % 1024 == 0:
        return f"{size >> 10} KiB"
    return f"{size} B"


def time_label(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.0f} ns"


# (bench, size or None, peer, minimum ratio peer/sealkit)
RATIO_TARGETS = [
    ("encrypt", 64, "c", 1.2), ("decrypt", 64, "c", 1.2),
    ("encrypt", 1 << 20, "c", 3.0), ("decrypt", 1 << 20, "c", 4.0),
    ("profile encrypt", None, "pynacl", 4.0), ("profile encrypt --ndjson", None, "pynacl", 8.0),
    ("encrypt --lines", 64, "c", 1.0), ("encrypt --lines", 64, "pynacl", 4.0),
    ("encrypt --lines", 1 << 20, "c", 3.0),
]
# (bench, minimum values per second, maximum peak MB)
AUDIT_TARGETS = {"audit without key": (500_000, 200), "audit with key": (300_000, 200),
                 # Memory must be bounded by distinct nonces, not findings (250,000 findings here).
                 "audit, 250k copies": (300_000, 150)}


def ratio_target(bench, size, peer):
    for t_bench, t_size, t_peer, minimum in RATIO_TARGETS:
        if t_bench == bench and t_peer == peer and (t_size is None or t_size == size):
            return minimum
    return None


def report(results_path, json_path):
    records = [json.loads(line) for line in open(results_path) if line.strip()]
    # A peer may run in several rounds, alternating with the others so that a burst of load
    # on the machine does not fall on one peer only: its samples are pooled.
    samples = {}
    for r in records:
        entry = samples.setdefault((r["bench"], r["size"], r["peer"]), {"samples": [], "peak_rss_kib": 0})
        entry["samples"].extend(r["ns_per_op"])
        entry["peak_rss_kib"] = max(entry["peak_rss_kib"], r.get("peak_rss_kib") or 0)
    medians = {key: {"median_ns": statistics.median(entry["samples"]), **entry} for key, entry in samples.items()}
    rows, verdicts = [], []
    seen = []
    for r in records:
        key = (r["bench"], r["size"])
        if key not in seen:
            seen.append(key)
    for bench, size in seen:
        ours = medians.get((bench, size, "sealkit"))
        if ours is None or bench.startswith(("v1 ", "v2 ")):  # the format comparison has its own lines
            continue
        row = {"bench": bench, "size": size, "sealkit_ns": ours["median_ns"], "peers": {}}
        for peer in ("c", "pynacl"):
            theirs = medians.get((bench, size, peer))
            if theirs is None:
                continue
            ratio = theirs["median_ns"] / ours["median_ns"]
            target = ratio_target(bench, size, peer)
            entry = {"median_ns": theirs["median_ns"], "ratio": round(ratio, 2)}
            if target is not None:
                entry["target"] = target
                entry["met"] = ratio >= target
                verdicts.append(entry["met"])
            row["peers"][peer] = entry
        if bench.startswith("json parse"):
            # Parsing throughput: linear in the input, escapes included.
            row["mib_per_second"] = round(size / (1 << 20) / (ours["median_ns"] / 1e9), 1)
        if bench in AUDIT_TARGETS:
            per_second = 1e9 / ours["median_ns"]
            peak_mb = (ours["peak_rss_kib"] or 0) * 1024 / 1e6
            minimum, maximum_mb = AUDIT_TARGETS[bench]
            row["values_per_second"] = round(per_second)
            row["peak_mb"] = round(peak_mb, 1)
            row["target"] = {"values_per_second": minimum, "peak_mb": maximum_mb}
            row["met"] = per_second >= minimum and peak_mb < maximum_mb
            verdicts.append(row["met"])
        rows.append(row)

    def cell(row, peer):
        entry = row["peers"].get(peer)
        if entry is None:
            return "", ""
        mark = ""
        if "target" in entry:
            mark = f" {'✓' if entry['met'] else '✗'} (≥ {entry['target']:g})"
        return time_label(entry["median_ns"]), f"{entry['ratio']:.2f}{mark}"

    header = ["benchmark", "size", "SealKit", "C", "C ÷ SealKit", "PyNaCl", "PyNaCl ÷ SealKit"]
    table = [header]
    for row in rows:
        c_time, c_ratio = cell(row, "c")
        p_time, p_ratio = cell(row, "pynacl")
        ours = time_label(row["sealkit_ns"])
        if "mib_per_second" in row:
            ours = f"{row['mib_per_second']:,.1f} MiB/s ({ours})"
        if "values_per_second" in row:
            ours = (f"{row['values_per_second']:,} values/s, {row['peak_mb']:.0f} MB peak"
                    f" {'✓' if row['met'] else '✗'}")
        size = size_label(row["size"]) if row["size"] else ""
        table.append([row["bench"], size, ours, c_time, c_ratio, p_time, p_ratio])
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = ["| " + " | ".join(text.ljust(widths[i]) for i, text in enumerate(line)) + " |" for line in table]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    print("\n".join(lines))
    # v2 against v1: what v2's bound place costs, one format's time over the other's, through the same call.
    format_rows = []
    for bench, size in seen:
        if not bench.startswith("v2 "):
            continue
        v2 = medians.get((bench, size, "sealkit"))
        v1 = medians.get(("v1 " + bench[3:], size, "sealkit"))
        if v2 is None or v1 is None:
            continue
        ratio = v2["median_ns"] / v1["median_ns"]
        row = {"bench": bench[3:], "size": size, "v1_ns": v1["median_ns"], "v2_ns": v2["median_ns"], "v2_over_v1": round(ratio, 2)}
        if "retired" not in bench:
            row["target"] = 1.3
            row["met"] = ratio <= 1.3
            verdicts.append(row["met"])
        format_rows.append(row)
    if format_rows:
        print("\nv2 (bound) against v1 (Rownd's), same call, v2 time ÷ v1 time (target ≤ 1.3; with 255 retired keys,"
              " v1 tries each key and v2 opens once):")
        for row in format_rows:
            mark = f" {'✓' if row['met'] else '✗'}" if "met" in row else ""
            print(f"  {row['bench']:<28} {size_label(row['size']):>6}  v1 {time_label(row['v1_ns']):>9}"
                  f"  v2 {time_label(row['v2_ns']):>9}  {row['v2_over_v1']:.2f}{mark}")
    load = os.getloadavg()
    print(f"\nTimes are medians per operation (per profile, per line, per value) of every repetition, peers"
          f" alternating over rounds, each after a warm-up; ratios above 1 mean SealKit is faster. Load average"
          f" at the end: {load[0]:.2f} on {os.cpu_count()} cores. Targets met: {sum(verdicts)} of {len(verdicts)}.")
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"rows": rows, "formats": format_rows, "raw": records, "load_average": load, "cores": os.cpu_count(),
                       "targets_met": sum(verdicts), "targets": len(verdicts)}, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) >= 7 and args[0] == "time" and args[6] == "--":
        time_process(args[1], args[2], int(args[3]), int(args[4]), args[5], args[7:])
    elif len(args) == 4 and args[0] == "lines":
        generate_lines(int(args[1]), int(args[2]), args[3])
    elif len(args) == 4 and args[0] == "profiles":
        generate_profiles(args[1], int(args[2]), args[3])
    elif len(args) == 3 and args[0] == "audit-ndjson":
        generate_audit_ndjson(args[1], args[2])
    elif len(args) == 3 and args[0] == "audit-copies":
        generate_audit_copies(args[1], args[2])
    elif len(args) in (2, 4) and args[0] == "report":
        report(args[1], args[3] if len(args) == 4 and args[2] == "--json" else None)
    else:
        sys.exit(__doc__)
