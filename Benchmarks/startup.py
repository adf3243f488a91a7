#!/usr/bin/env python3
"""Start-up and size of the shipped sealkit against Debian's age and magic-wormhole, the tools a user would otherwise install.

    Benchmarks/startup.py SEALKIT [--json PATH]

SEALKIT is the release binary (the Swift runtime linked in, as Scripts/package ships it). Times
`sealkit --version`, `age --version` and `wormhole --version` (Debian's /usr/bin/age and
/usr/bin/wormhole) as whole processes: median wall time over rounds in which the three alternate,
after a warm-up. Prints sizes (as built, and stripped as the package has it), the shared libraries
each loads, and the dynamic loader's own statistics for sealkit (LD_DEBUG=statistics): a binary
with many libraries spends its time before main mapping, relocating and initialising them.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))


def timed(command, repetitions):
    times = []
    for _ in range(repetitions):
        started = time.perf_counter()
        subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        times.append((time.perf_counter() - started) * 1000)
    return times


def libraries(path):
    """Shared libraries the dynamic loader maps for path (ldd), vdso left out."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if "=>" in line or line.strip().startswith("/")]


def loader(command):
    """The dynamic loader's own statistics (LD_DEBUG=statistics): total cycles, relocation's share, relocations."""
    err = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "LD_DEBUG": "statistics"}).stderr
    total = re.search(r"total startup time in dynamic loader:\s+([0-9]+) cycles", err)
    share = re.search(r"time needed for relocation:\s+[0-9]+ cycles \(([0-9.]+)%\)", err)
    symbols = re.search(r"number of relocations:\s+([0-9]+)", err)
    relative = re.search(r"number of relative relocations:\s+([0-9]+)", err)
    if not (total and share and symbols and relative):
        return None
    return {"cycles": int(total.group(1)), "relocation_percent": float(share.group(1)),
            "relocations": int(symbols.group(1)), "relative_relocations": int(relative.group(1))}


def main():
    if len(sys.argv) not in (2, 4):
        print(__doc__, file=sys.stderr)
        return 64
    sealkit = os.path.realpath(sys.argv[1])
    json_path = sys.argv[3] if len(sys.argv) == 4 and sys.argv[2] == "--json" else None
    with tempfile.TemporaryDirectory() as work:
        stripped = os.path.join(work, "sealkit")
        subprocess.run(["strip", "--strip-unneeded", "-o", stripped, sealkit], check=True)
        peers = {
            "sealkit": [stripped, "--version"],
            "age": ["/usr/bin/age", "--version"],
            "wormhole": ["/usr/bin/wormhole", "--version"],
        }
        repetitions = {"sealkit": 30, "age": 30, "wormhole": 5}
        for command in peers.values():
            timed(command, 3)  # warm-up: page cache, Python's bytecode cache
        samples = {name: [] for name in peers}
        for _ in range(ROUNDS):
            for name, command in peers.items():
                samples[name] += timed(command, repetitions[name])
        medians = {name: statistics.median(values) for name, values in samples.items()}
        sizes = {"sealkit (as built)": os.path.getsize(sealkit), "sealkit (stripped, packaged)": os.path.getsize(stripped),
                 "age": os.path.getsize("/usr/bin/age")}
        libs = {name: len(libraries(command[0])) for name, command in peers.items() if name != "wormhole"}
        runs = [loader(peers["sealkit"]) for _ in range(9)]
        runs = [r for r in runs if r is not None]
        statistics_sealkit = sorted(runs, key=lambda r: r["cycles"])[len(runs) // 2] if runs else None

    print("start-up, `--version` as a whole process, median ms "
          f"({ROUNDS} rounds, peers alternating; 30/30/5 runs per round):")
    for name, value in medians.items():
        extra = f", {libs[name]} shared libraries" if name in libs else ", Python"
        print(f"  {name:<10} {value:8.2f} ms{extra}")
    ratio = medians["sealkit"] / medians["age"]
    print(f"  sealkit / age = {ratio:.2f} (target: at most 2); wormhole / sealkit = "
          f"{medians['wormhole'] / medians['sealkit']:.1f}")
    if statistics_sealkit is not None:
        l = statistics_sealkit
        print(f"  sealkit's dynamic loader (LD_DEBUG=statistics, median of 9): {l['cycles'] / 1e6:.1f} million cycles, "
              f"{l['relocation_percent']:.0f}% of them relocating ({l['relocations']:,} symbol and "
              f"{l['relative_relocations']:,} relative relocations)")
    print("size:")
    for name, value in sizes.items():
        print(f"  {name:<30} {value / 1e6:6.1f} MB")
    if json_path:
        with open(json_path, "w") as out:
            json.dump({"medians_ms": medians, "samples_ms": samples, "ratio_sealkit_age": ratio,
                       "loader_sealkit": statistics_sealkit, "sizes_bytes": sizes,
                       "shared_libraries": libs}, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
