#!/usr/bin/env python3
# Python: it times three programs from outside (sealkit, DuckDB in-process, spark-submit) and reads their rusage.
"""The audit at scale: memory per value, and throughput against a parse-only floor and the Spark job.

    Scripts/bench --audit-scale [--rounds N] [--spark] [--work DIR]    (installs what it needs, builds, runs this)
    .venv/bin/python Benchmarks/audit_scale.py SEALKIT [--rounds N] [--spark] [--work DIR]

SEALKIT is a release build. Exports are made here: N values, four per profile, each a random v1-shaped
ciphertext of a 16-byte plaintext (base64 of 56 bytes; the keyless audit reads shapes and nonces only), as
Scripts/bench's audit export. Measured, peers interleaved round by round, medians reported:
- `sealkit audit` on 1,000,000 and 4,000,000 values: CPU seconds and peak RSS; the difference in peak RSS per
  extra value is what the whole-data-set checks hold per distinct nonce;
- the floor: DuckDB (one thread) `read_json` of the same 1,000,000-value file with a distinct count of each value's
  first 32 characters, in a Python child of its own (CPU seconds of the query alone): DuckDB comes from the project's .venv, where
  `Scripts/bench --audit-scale` installs it;
- with --spark, the Spark job in local mode with 1 and 2 cores (wall seconds, Spark's start included).
"""
import argparse
import base64
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def generate(path, values):
    if path.exists():
        return
    with open(path, "w") as out:
        chunk = 4 * 4096
        for start in range(0, values, chunk):
            count = min(chunk, values - start)
            blob = os.urandom(56 * count)
            texts = [base64.b64encode(blob[i * 56:(i + 1) * 56]).decode() for i in range(count)]
            for j in range(0, count, 4):
                index = (start + j) // 4
                ssn, dob, notes, card = texts[j:j + 4]
                out.write(f'{{"user_id":"user_{index}","ssn":"{ssn}","date_of_birth":"{dob}",'
                          f'"notes":"{notes}","card":"{card}"}}\n')


def run_child(command, env=None):
    """Wall seconds, CPU seconds (user + system) and peak RSS in bytes of one child and its children."""
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - start
    stderr = process.stderr.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"{command[0]} exited {code}: {stderr[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def duckdb_floor(path):
    """Wall and CPU seconds of the floor, measured in a child of its own. A child started from this process
    counts this process's resident memory in its peak until it execs, so DuckDB's memory held here (180 MiB
    after one query) made every later `sealkit audit` of 1M values report that peak instead of its own."""
    output = subprocess.run([sys.executable, __file__, "--floor", str(path)], check=True, capture_output=True, text=True)
    wall, cpu = output.stdout.split()
    return float(wall), float(cpu)


def measure_floor(path):
    import duckdb

    connection = duckdb.connect(config={"threads": 1})
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.monotonic()
    connection.execute(
        "SELECT count(DISTINCT left(v, 32)) FROM (SELECT unnest([ssn, date_of_birth, notes, card]) AS v "
        f"FROM read_json('{path}', format = 'newline_delimited'))").fetchall()
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    connection.close()
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--floor":
        print(*measure_floor(sys.argv[2]))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("sealkit")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--spark", action="store_true")
    parser.add_argument("--work")
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="audit-scale-"))
    work.mkdir(exist_ok=True)
    one, four = work / "audit-1m.ndjson", work / "audit-4m.ndjson"
    generate(one, 1_000_000)
    generate(four, 4_000_000)
    print(f"exports: 1M values {one.stat().st_size / 1e6:.0f} MB, 4M values {four.stat().st_size / 1e6:.0f} MB", file=sys.stderr)

    # Not imported here: this process stays small (see `duckdb_floor`).
    floor = importlib.util.find_spec("duckdb") is not None
    env = dict(os.environ, PATH=f"{ROOT / '.venv/bin'}{os.pathsep}{os.environ.get('PATH', '')}",
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    results = {}
    for round_ in range(args.rounds):
        for name, measure in [
            ("sealkit audit, 1M", lambda: run_child([args.sealkit, "audit", "--no-progress", str(one)])),
            ("DuckDB floor, 1M", (lambda: duckdb_floor(one)) if floor else None),
            ("sealkit audit, 4M", lambda: run_child([args.sealkit, "audit", "--no-progress", str(four)])),
        ] + ([(f"Spark job, local[{cores}], 1M", (lambda cores=cores: run_child(
            [str(ROOT / ".venv/bin/spark-submit"), "--master", f"local[{cores}]", "--conf", "spark.ui.enabled=false",
             "--driver-memory", "2g", str(ROOT / "Integrations/spark/sealkit_audit.py"), "--sealkit", args.sealkit,
             "--output", os.devnull, str(one)], env=env))) for cores in (1, 2)] if args.spark and round_ == 0 else []):
            if measure is None:
                continue
            result = measure()
            results.setdefault(name, []).append(result)
            print(f"round {round_ + 1}: {name}: {result}", file=sys.stderr)

    def median(name, index):
        return statistics.median(r[index] for r in results[name])

    print("| run | wall s | CPU s | values/s (CPU) | peak RSS |")
    print("|---|---|---|---|---|")
    for name, runs in results.items():
        values = 4_000_000 if "4M" in name else 1_000_000
        cpu = median(name, 1)
        rss = f"{median(name, 2) / 2**20:.0f} MiB" if len(runs[0]) > 2 else "-"
        rate = values / cpu if "Spark" not in name else values / median(name, 0)
        print(f"| {name} | {median(name, 0):.2f} | {cpu:.2f} | {rate:,.0f}{' (wall)' if 'Spark' in name else ''} | {rss} |")
    one_rss, four_rss = median("sealkit audit, 1M", 2), median("sealkit audit, 4M", 2)
    per_value = (four_rss - one_rss) / 3_000_000
    print(f"\npeak RSS per extra value: {per_value:.1f} bytes; {2**30 / per_value:,.0f} distinct values per GiB")
    if floor:
        print(f"sealkit audit / DuckDB floor (CPU): {median('sealkit audit, 1M', 1) / median('DuckDB floor, 1M', 1):.2f}x")


if __name__ == "__main__":
    main()
