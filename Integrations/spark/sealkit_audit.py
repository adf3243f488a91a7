#!/usr/bin/env python3
# Python: Spark's own language besides the JVM ones; every check on a value runs in the sealkit binary, and this
# file only reads the input, shuffles public facts and hands them back to sealkit for the report.
"""sealkit audit at data-lake scale: the same findings on Spark as `sealkit audit` on one machine.

    spark-submit Integrations/spark/sealkit_audit.py [--schema FILE] [--format json|sarif] [--output FILE]
        [--partitions N] [--sealkit PATH] INPUT...

INPUT is an NDJSON file (.ndjson, .jsonl), a Parquet file (.parquet; each row a profile, its columns the
fields), or a folder of either (walked recursively; hidden entries and Spark's `_` files skipped). Any path
Hadoop reads works (file:, hdfs:, s3a: with its connector).

How it works (docs/audit.md, "More than one machine"):
1. Every line (or Parquet row, as JSON) is tagged with its place: the file's index and its line (row) number
   in that file, counted before any repartitioning, so places equal those of `sealkit audit` on the files.
2. `--partitions N` repartitions the tagged lines; each partition goes through `sealkit audit --facts` on its
   executor, which runs every per-value check (SealKit's own code) and prints the value's findings and its
   public facts: place, the nonce's first 16 bytes, a BLAKE2b digest of the ciphertext. Never a value or a key.
3. Spark shuffles those facts by nonce (repeats: reused nonces and copied ciphertexts), by key fingerprint (the key
   census) and by file (bad lines), and sums the counts.
4. `sealkit audit --from-facts` on the driver turns the merged facts into the report: the same findings,
   messages, JSON and SARIF writers as on one machine.

Exit status: 0 clean or notes only, 1 errors or warnings (as `sealkit audit --fail-on warning`), 2 or above
for a usage or input error (2 bad arguments; otherwise sealkit's own: 64 usage, 65 bad schema, 66 nothing
audited, 74 unreadable).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import threading

LINES = (".ndjson", ".jsonl")
PARQUET = (".parquet",)
# Sorts a file's unreadable-file finding after its values, as one machine reports it.
END_OF_FILE = 1 << 62


class InputError(Exception):
    def __init__(self, message, status=64):
        super().__init__(message)
        self.status = status


def parse_arguments(argv):
    parser = argparse.ArgumentParser(
        prog="sealkit_audit.py", description="sealkit audit on Spark: NDJSON and Parquet exports, any size.")
    parser.add_argument("--schema", metavar="FILE", help="a schema in Rownd's app-config shape (as sealkit audit)")
    parser.add_argument("--format", choices=["json", "sarif"], default="json", help="report format (default json)")
    parser.add_argument("--output", metavar="FILE", help="write the report here instead of stdout")
    parser.add_argument("--partitions", metavar="N", type=int, help="repartition into N partitions before the per-value pass")
    parser.add_argument("--sealkit", metavar="PATH", default="sealkit", help="the sealkit binary on the executors (default: on PATH)")
    parser.add_argument("inputs", metavar="INPUT", nargs="+", help="NDJSON or Parquet files, or folders of them")
    args = parser.parse_args(argv)
    if args.partitions is not None and args.partitions < 1:
        parser.error("--partitions must be at least 1")
    return args


def sealkit_path(name):
    found = shutil.which(name) if os.sep not in name else (name if os.access(name, os.X_OK) else None)
    if not found:
        raise InputError(f"{name}: no such sealkit binary; give its path with --sealkit", 64)
    return os.path.abspath(found)


def check_sealkit(sealkit, schema):
    """The driver's sealkit reads the schema (exit 65 for a bad one) before any Spark work, and has --facts."""
    command = [sealkit, "audit", "--facts"] + (["--schema", schema] if schema else []) + ["-"]
    run = subprocess.run(command, input=b"", capture_output=True)
    if run.returncode != 0:
        raise InputError(run.stderr.decode(errors="replace").strip() or f"{sealkit} exited {run.returncode}", run.returncode)


# MARK: Inputs


def list_inputs(spark, inputs, schema):
    """Every file to audit, as (display path, Hadoop URI, kind), sorted by display path (UTF-8 bytes), each once."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    Path = jvm.org.apache.hadoop.fs.Path
    excluded = set()
    if schema:
        schema_path = Path(os.path.abspath(schema))
        excluded.add(str(schema_path.getFileSystem(conf).makeQualified(schema_path).toUri()))
    found = {}

    def add(display, status, named):
        uri = str(status.getPath().toUri())
        if uri in excluded:
            return
        name = display.lower()
        if name.endswith(LINES):
            kind = "lines"
        elif name.endswith(PARQUET):
            kind = "parquet"
        elif name.endswith(".json"):
            raise InputError(
                f"{display}: the Spark job reads NDJSON (.ndjson, .jsonl) and Parquet; "
                "turn a JSON array into NDJSON first (jq -c '.[]'), or audit it with sealkit audit")
        elif named:
            raise InputError(f"{display}: cannot tell its format; the Spark job reads .ndjson, .jsonl and .parquet files")
        else:
            return
        found.setdefault(display, (display, uri, kind))

    for given in inputs:
        path = Path(given)
        fs = path.getFileSystem(conf)
        if not fs.exists(path):
            raise InputError(f"{given}: no such file or folder; give the files or folders to audit")
        status = fs.getFileStatus(path)
        if not status.isDirectory():
            add(given, status, named=True)
            continue
        pending = [(status, given)]
        while pending:
            folder, shown = pending.pop()
            for child in fs.listStatus(folder.getPath()):
                name = child.getPath().getName()
                if name.startswith(".") or name.startswith("_"):
                    continue
                display = shown + name if shown.endswith("/") else shown + "/" + name
                if child.isDirectory():
                    pending.append((child, display))
                elif child.isFile():
                    add(display, child, named=False)
    return sorted(found.values(), key=lambda entry: entry[0].encode())


def tagged_lines(spark, files):
    """Each line or row as `FILE LINE TEXT`: its file's index and its 1-based line (row) in that file."""
    from pyspark.sql import functions as F

    index = {}
    for number, (_, uri, _) in enumerate(files):
        index[uri] = number
    parts = []

    lines = [uri for _, uri, kind in files if kind == "lines"]
    if lines:
        # lineSep "\n": only a line feed ends a line, as for sealkit (which drops a final \r itself).
        text = spark.read.option("lineSep", "\n").text(lines).select(
            "value", F.col("_metadata.file_path").alias("path"), F.col("_metadata.file_block_start").alias("start"))
        rows = text.rdd.map(lambda row: (row.path, row.start, row.value))

        def count_blocks(rows):
            counts = {}
            for path, start, _ in rows:
                counts[(path, start)] = counts.get((path, start), 0) + 1
            return list(counts.items())

        # A file is read in blocks; each block stays whole in one partition, its lines in order. A block's
        # first line number is one more than the lines of the file's blocks before it.
        counts = sorted(rows.mapPartitions(count_blocks).collect())
        base, before = {}, {}
        for (path, start), count in counts:
            base[(path, start)] = before.get(path, 0)
            before[path] = before.get(path, 0) + count
        base = spark.sparkContext.broadcast(base)
        files_index = spark.sparkContext.broadcast(resolve_paths(index, set(before)))

        def number(rows):
            seen = {}
            for path, start, value in rows:
                key = (path, start)
                offset = seen.get(key, 0)
                seen[key] = offset + 1
                yield f"{files_index.value[path]} {base.value[key] + offset + 1} {value}"

        parts.append(rows.mapPartitions(number))

    parquet = [uri for _, uri, kind in files if kind == "parquet"]
    if parquet:
        table = spark.read.option("mergeSchema", "true").parquet(*parquet)
        columns = [F.col(f"`{name}`") for name in table.columns]
        rows = table.select(
            F.to_json(F.struct(*columns)).alias("value"), F.col("_metadata.file_path").alias("path"),
            F.col("_metadata.row_index").alias("row"))
        paths = [row.path for row in rows.select("path").distinct().collect()]
        files_index = spark.sparkContext.broadcast(resolve_paths(index, set(paths)))
        parts.append(rows.rdd.map(lambda row: f"{files_index.value[row.path]} {row.row + 1} {row.value}"))

    if not parts:
        return None
    return parts[0] if len(parts) == 1 else spark.sparkContext.union(parts)


def resolve_paths(index, seen):
    """Spark's `_metadata.file_path` for each file, to its index (the two may spell a URI differently)."""
    from urllib.parse import unquote

    def canonical(uri):
        text = unquote(uri)
        if text.startswith("file:///"):
            text = "file:/" + text[len("file:///"):]
        return text

    by_canonical = {canonical(uri): number for uri, number in index.items()}
    resolved = {}
    for path in seen:
        number = by_canonical.get(canonical(path))
        if number is None:
            raise InputError(f"Spark read {path}, which is not among the files listed", 70)
        resolved[path] = number
    return resolved


# MARK: The per-value pass, on the executors


def facts_of(sealkit, schema_name):
    def run(lines):
        from pyspark import SparkFiles

        command = [sealkit, "audit", "--facts"]
        if schema_name:
            command += ["--schema", SparkFiles.get(schema_name)]
        command.append("-")
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        errors = []

        def feed():
            try:
                for line in lines:
                    process.stdin.write(line.encode() + b"\n")
                process.stdin.close()
            except BaseException as error:  # a sealkit that stopped early: its status says why
                errors.append(error)
                try:
                    process.stdin.close()
                except OSError:
                    pass

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        for out in process.stdout:
            yield json.loads(out)
        writer.join()
        stderr = process.stderr.read().decode(errors="replace").strip()
        status = process.wait()
        if status != 0:
            raise RuntimeError(f"{sealkit} audit --facts exited {status}: {stderr}")
        if errors:
            raise errors[0]

    return run


# MARK: The whole-data-set checks, as shuffles of public facts


def position(fact):
    return (fact["file"], fact["line"], fact["seq"])


def merge(facts):
    """The merged facts `sealkit audit --from-facts` reads: (sort key, line) pairs, and the summary."""
    findings = facts.filter(lambda f: "finding" in f).map(lambda f: (position(f["finding"]), json.dumps(f)))

    values = facts.filter(lambda f: "value" in f).map(lambda f: f["value"]).map(
        lambda v: (v["nonce"], (position(v), v["digest"], v["field"])))

    def first_of(a, b):
        return a if a[0] <= b[0] else b

    # Per nonce: how many places, and the first (in file, line and sequence order), where one machine saw it first.
    groups = values.aggregateByKey(
        (0, None),
        lambda acc, v: (acc[0] + 1, v if acc[1] is None else first_of(acc[1], v)),
        lambda a, b: (a[0] + b[0], b[1] if a[1] is None else (a[1] if b[1] is None else first_of(a[1], b[1])))) \
        .filter(lambda kv: kv[1][0] > 1)
    groups.persist()

    def repeat(kv):
        _, ((pos, digest, field), (_, first)) = kv
        if pos == first[0]:
            return []
        place = {"file": pos[0], "line": pos[1], "field": field}
        first_place = {"file": first[0][0], "line": first[0][1], "field": first[2]}
        fact = {"repeat": dict(place, copy=digest == first[1], first=first_place)}
        return [(pos, json.dumps(fact), kv[0], digest == first[1])]

    repeats = values.join(groups).flatMap(repeat)
    repeats.persist()
    kinds = repeats.map(lambda r: (r[2], (r[3], not r[3]))).reduceByKey(lambda a, b: (a[0] or b[0], a[1] or b[1])).values()
    copied, shared = kinds.map(lambda k: (int(k[0]), int(k[1]))).fold((0, 0), lambda a, b: (a[0] + b[0], a[1] + b[1]))
    def larger(a, b):
        # The most places; of equal groups, the one seen first (one machine's tie rule).
        if a is None or b is None:
            return b if a is None else a
        return a if (a[0], tuple(-x for x in a[1][0])) >= (b[0], tuple(-x for x in b[1][0])) else b

    largest = groups.map(lambda kv: kv[1]).fold(None, larger)

    bad = facts.filter(lambda f: "bad_line" in f).map(lambda f: f["bad_line"]) \
        .map(lambda b: (b["file"], (b["line"], b["message"], 1))) \
        .reduceByKey(lambda a, b: (min(a, b)[0], min(a, b)[1], a[2] + b[2])).collectAsMap()
    odd = facts.filter(lambda f: "not_profile" in f).map(lambda f: f["not_profile"]) \
        .map(lambda n: (n["file"], (n["line"], 1))).reduceByKey(lambda a, b: (min(a[0], b[0]), a[1] + b[1])).collectAsMap()
    parts = facts.filter(lambda f: "counts" in f).map(lambda f: f["counts"])
    counts = parts.map(lambda c: (c["values"], c["profiles"], c["blank_lines"], c["naming_no_key"])) \
        .fold((0, 0, 0, 0), lambda a, b: tuple(x + y for x, y in zip(a, b)))
    # The key census: values per key fingerprint (a v2 header's, public), summed over the parts.
    census = parts.flatMap(lambda c: c["keys"].items()).reduceByKey(lambda a, b: a + b).collectAsMap()

    # A file's one unreadable-file finding: its first bad line; for a file without any, its first value that is
    # not a profile. After the file's values.
    ends = []
    for file, (line, message, count) in bad.items():
        ends.append(((file, END_OF_FILE, 0), json.dumps({"bad_lines": {"file": file, "line": line, "message": message, "count": count}})))
    for file, (line, count) in odd.items():
        if file not in bad:
            ends.append(((file, END_OF_FILE, 0), json.dumps({"not_profiles": {"file": file, "line": line, "count": count}})))

    ordered = findings.union(repeats.map(lambda r: (r[0], r[1]))).union(facts.context.parallelize(ends, 1)).sortByKey()
    first = None
    if largest is not None:
        pos, _, field = largest[1]
        first = {"file": pos[0], "line": pos[1], "field": field}
    summary = {
        "values": counts[0], "profiles": counts[1], "blank_lines": counts[2],
        "copied_ciphertexts": copied, "shared_nonces": shared,
        "largest_group": largest[0] if largest is not None else 0, "largest_group_first": first,
        "keys": dict(sorted(census.items())), "naming_no_key": counts[3],
    }
    return ordered, summary


# MARK: The report, by sealkit


def report(sealkit, args, files, ordered, summary, stdout):
    command = [sealkit, "audit", "--from-facts", "--format", args.format]
    if args.schema:
        command += ["--schema", args.schema]
    command.append("-")
    # sealkit's one-line summary (or error) on stderr: spark-submit runs this driver with its stderr merged into
    # stdout, so with the report on stdout only an error is passed on, and the exit status says the rest.
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=stdout, stderr=subprocess.PIPE)
    try:
        process.stdin.write(json.dumps({"files": [display for display, _, _ in files]}).encode() + b"\n")
        if ordered is not None:
            for _, line in ordered.toLocalIterator():
                process.stdin.write(line.encode() + b"\n")
        process.stdin.write(json.dumps({"summary": summary}).encode() + b"\n")
        process.stdin.close()
    except BrokenPipeError:
        pass
    said = process.stderr.read().decode(errors="replace")
    status = process.wait()
    if said and (args.output or status >= 2):
        sys.stderr.write(said)
    return status


def main(argv=None, spark=None):
    args = parse_arguments(sys.argv[1:] if argv is None else argv)
    try:
        # The driver writes the report with its own sealkit, found as the executors find theirs.
        sealkit = sealkit_path(args.sealkit)
        check_sealkit(sealkit, args.schema)
        executors = os.path.abspath(args.sealkit) if os.sep in args.sealkit else args.sealkit
        own = spark is None
        if own:
            from pyspark.sql import SparkSession

            spark = SparkSession.builder.appName("sealkit audit").getOrCreate()
            spark.sparkContext.setLogLevel("ERROR")
        try:
            return audit(spark, args, sealkit, executors)
        finally:
            if own:
                spark.stop()
    except InputError as error:
        print(f"sealkit_audit: {error}", file=sys.stderr)
        return error.status if error.status >= 2 else 2


def audit(spark, args, sealkit, executors):
    files = list_inputs(spark, args.inputs, args.schema)
    schema_name = None
    if args.schema:
        spark.sparkContext.addFile(os.path.abspath(args.schema))
        schema_name = os.path.basename(args.schema)
    lines = tagged_lines(spark, files) if files else None
    ordered, summary = None, {
        "values": 0, "profiles": 0, "blank_lines": 0, "copied_ciphertexts": 0, "shared_nonces": 0,
        "largest_group": 0, "largest_group_first": None, "keys": {}, "naming_no_key": 0}
    facts = None
    if lines is not None:
        if args.partitions:
            lines = lines.repartition(args.partitions)
        facts = lines.mapPartitions(facts_of(executors, schema_name))
        facts.persist()
        ordered, summary = merge(facts)
    try:
        if args.output:
            with open(args.output, "wb") as out:
                return report(sealkit, args, files, ordered, summary, out)
        sys.stdout.flush()
        return report(sealkit, args, files, ordered, summary, None)
    finally:
        if facts is not None:
            facts.unpersist()


if __name__ == "__main__":
    sys.exit(main())
