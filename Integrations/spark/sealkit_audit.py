#!/usr/bin/env python3
# Python: Spark's own language besides the JVM ones; every check on a value runs in the sealkit binary, and this
# file only reads the input, shuffles public facts and hands them back to sealkit for the report.
"""sealkit audit at data-lake scale: the same findings on Spark as `sealkit audit` on one machine.

    spark-submit Integrations/spark/sealkit_audit.py [--schema FILE] [--format json|sarif] [--output FILE]
        [--partitions N] [--sealkit PATH] [--no-progress] INPUT...

Needs Java 17 or later and pyspark (4.x; `pip install pyspark`), and sealkit on the driver and every executor.

INPUT is an NDJSON file (.ndjson, .jsonl), a Parquet file (.parquet; each row a profile, its columns the
fields), or a folder of either (walked recursively; hidden entries and Spark's `_` files skipped); one run may mix
them. Any path Hadoop reads works (file:, hdfs:, s3a: with its connector).

How it works (docs/audit.md, "More than one machine"):
1. Every line (or Parquet row, as JSON) is tagged with its place: the file's index and its line (row) number
   in that file, counted before any repartitioning, so places equal those of `sealkit audit` on the files.
2. `--partitions N` repartitions the tagged lines; each partition goes through `sealkit audit --facts` on its
   executor, which runs every per-value check (SealKit's own code) and prints the value's findings and its
   facts. Before a fact leaves the executor, the job replaces the value's nonce (its first 16 bytes) and its
   ciphertext digest by keyed BLAKE2b digests, under a key drawn at random for the run: for a flagged field
   that holds plaintext which merely looks like base64, those bytes would be plaintext.
3. Spark shuffles those facts by nonce digest (repeats: reused nonces and copied ciphertexts), by key
   fingerprint (the key census) and by file (bad lines), and sums the counts.
4. `sealkit audit --from-facts` on the driver turns the merged facts into the report: the same findings,
   messages, JSON and SARIF writers as on one machine.

The job's own lines (a line per stage on a terminal, the one-line summary `sealkit audit` prints, or one error
line) go to stderr, each starting `sealkit_audit: `; under spark-submit, which merges the driver's stderr into its
stdout, they go to spark-submit's own stderr, so the report can go to stdout.

Exit status (sealkit audit's where the meaning is the same):
    0   no findings, or notes only
    1   findings that fail the audit (errors or warnings, as `sealkit audit --fail-on warning`)
    64  bad arguments: an unknown option, a missing INPUT or an INPUT of another format
    65  a bad schema
    66  nothing audited (no file, no profile, or no flagged value)
    69  something the job runs on is missing: Java (17 or later), pyspark, or the sealkit binary
    70  the job's own failure (a bug; the line says where)
    74  an INPUT that cannot be read: a truncated or damaged Parquet file, a file that cannot be opened
    130 interrupted
"""
import argparse
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
import threading

LINES = (".ndjson", ".jsonl")
PARQUET = (".parquet",)
# Sorts a file's unreadable-file finding after its values, as one machine reports it.
END_OF_FILE = 1 << 62


# Exit statuses of the job's own failures, as sealkit's (BSD sysexits) where they mean the same. 0 and 1, and 66 for
# nothing audited, come from sealkit's report; 0 and 1 only ever say what the audit found.
USAGE, DATA_ERROR, UNAVAILABLE, SOFTWARE, IO_ERROR, INTERRUPTED = 64, 65, 69, 70, 74, 130
# Spark 4 runs on Java 17 or later; Spark 3.5, the last before it, on Java 8 or later.
JAVA_FOR_SPARK = {3: 8, 4: 17}
# The smallest Parquet file: "PAR1", a footer length and "PAR1" again, with an empty footer.
PARQUET_MINIMUM = 12
# What sealkit's executor-side failure carries to the driver through Spark's error text.
EXECUTOR_FAILURE = "sealkit_audit executor failure"


class JobError(Exception):
    """A failure the job explains in one line, with its exit status (never 0 or 1)."""

    def __init__(self, message, status=USAGE):
        super().__init__(message)
        self.status = status if status >= 2 else SOFTWARE


class Console:
    """Where the job's own lines go: a line per stage (on a terminal only), the summary and errors.

    spark-submit runs the driver's Python with its stderr merged into its stdout (Spark's PythonRunner), where the
    report may be going; there the lines go to the JVM's stderr, which is spark-submit's own.
    """

    def __init__(self, stream=None, terminal=None):
        self.stream = stream
        self.merged = stream is None and stderr_merged()
        self.progress = terminal if terminal is not None else stderr_is_terminal(self.merged)

    def say(self, text):
        # One line, whatever a message holds.
        line = "sealkit_audit: " + " ".join(str(text).split("\n")).replace("\r", " ")
        if self.merged:
            try:
                from pyspark import SparkContext

                SparkContext._ensure_initialized()
                SparkContext._jvm.System.err.println(line)
                return
            except Exception:  # no gateway after all: the merged stream is the one left
                pass
        stream = self.stream or sys.stderr
        stream.write(line + "\n")
        stream.flush()

    def stage(self, text):
        if self.progress:
            self.say(text)


def stderr_merged():
    """Whether this is spark-submit's driver, whose stderr is the same pipe as its stdout."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return False
    try:
        out, err = os.fstat(1), os.fstat(2)
    except OSError:
        return False
    return stat.S_ISFIFO(err.st_mode) and (out.st_dev, out.st_ino) == (err.st_dev, err.st_ino)


def stderr_is_terminal(merged):
    """Whether the job's lines reach a terminal: stderr's, or under spark-submit the JVM's (its parent's)."""
    if os.environ.get("TERM") == "dumb":
        return False
    if not merged:
        try:
            return sys.stderr.isatty()
        except (AttributeError, ValueError):
            return False
    try:
        target = os.readlink(f"/proc/{os.getppid()}/fd/2")
    except OSError:  # not Linux, or not ours to read: no stage lines rather than lines in a log
        return False
    return target.startswith(("/dev/pts/", "/dev/tty"))


class ArgumentParser(argparse.ArgumentParser):
    """argparse, with one line and sealkit's status 64 for bad arguments instead of a usage block and 2."""

    def error(self, message):
        raise JobError(f"{message}; see --help", USAGE)


def parse_arguments(argv):
    parser = ArgumentParser(
        prog="sealkit_audit.py", description="sealkit audit on Spark: NDJSON and Parquet exports, any size.")
    parser.add_argument("--schema", metavar="FILE", help="a schema in Rownd's app-config shape (as sealkit audit)")
    parser.add_argument("--format", choices=["json", "sarif"], default="json", help="report format (default json)")
    parser.add_argument("--output", metavar="FILE", help="write the report here instead of stdout")
    parser.add_argument("--partitions", metavar="N", type=int, help="repartition into N partitions before the per-value pass")
    parser.add_argument("--sealkit", metavar="PATH", default="sealkit", help="the sealkit binary on the executors (default: on PATH)")
    parser.add_argument("--no-progress", action="store_true", help="no line per stage (shown on a terminal only)")
    parser.add_argument("inputs", metavar="INPUT", nargs="+", help="NDJSON or Parquet files, or folders of them")
    args = parser.parse_args(argv)
    if args.partitions is not None and args.partitions < 1:
        parser.error("--partitions must be at least 1")
    return args


def sealkit_path(name):
    found = shutil.which(name) if os.sep not in name else (name if os.access(name, os.X_OK) else None)
    if not found:
        raise JobError(f"{name}: no such sealkit binary; install sealkit or give its path with --sealkit", UNAVAILABLE)
    return os.path.abspath(found)


def check_sealkit(sealkit, schema):
    """The driver's sealkit reads the schema (exit 65 for a bad one) before any Spark work, and has --facts."""
    command = [sealkit, "audit", "--facts"] + (["--schema", schema] if schema else []) + ["-"]
    try:
        run = subprocess.run(command, input=b"", capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise JobError(f"{sealkit}: cannot run it: {type(error).__name__}", UNAVAILABLE) from None
    if run.returncode != 0:
        said = first_line(run.stderr.decode(errors="replace")) or f"{sealkit} exited {run.returncode}"
        raise JobError(said, run.returncode)


def first_line(text, limit=400):
    lines = text.strip().splitlines()
    return lines[0][:limit] if lines else ""


def check_runtime():
    """pyspark and a Java it runs on, before Spark is asked to start: without them it fails with a page of its own."""
    try:
        import pyspark
    except ImportError:
        raise JobError("pyspark is not installed: the Spark job needs it (pip install pyspark) and Java 17", UNAVAILABLE) from None
    if "PYSPARK_GATEWAY_PORT" in os.environ:
        return  # spark-submit's driver: its JVM runs already
    home = os.environ.get("JAVA_HOME")
    if home:
        java = os.path.join(home, "bin", "java")
        if not os.access(java, os.X_OK):
            raise JobError(f"no Java: JAVA_HOME is {home}, which has no bin/java; Spark needs Java 17 or later", UNAVAILABLE)
    else:
        java = shutil.which("java")
        if not java:
            raise JobError("no Java: no java on PATH and no JAVA_HOME; Spark needs Java 17 or later", UNAVAILABLE)
    try:
        spark_major = int(pyspark.__version__.split(".")[0])
    except ValueError:
        return
    needed = JAVA_FOR_SPARK.get(spark_major, JAVA_FOR_SPARK[max(JAVA_FOR_SPARK)])
    try:
        run = subprocess.run([java, "-version"], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise JobError(f"no Java: {java} does not run ({type(error).__name__}); Spark needs Java {needed} or later", UNAVAILABLE) from None
    said = run.stderr.decode(errors="replace")
    # `version "17.0.15"`, or before Java 9 `version "1.8.0_402"`
    found = re.search(r'version "(?:1\.)?(\d+)', said)
    if run.returncode != 0 or not found:
        raise JobError(f"no Java: {java} -version fails; Spark needs Java {needed} or later", UNAVAILABLE)
    if int(found.group(1)) < needed:
        raise JobError(
            f"Java {found.group(1)} at {java} is too old: Spark {pyspark.__version__} needs Java {needed} or later "
            "(set JAVA_HOME to a newer one)", UNAVAILABLE)


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
            raise JobError(
                f"{display}: the Spark job reads NDJSON (.ndjson, .jsonl) and Parquet; "
                "turn a JSON array into NDJSON first (jq -c '.[]'), or audit it with sealkit audit")
        elif named:
            raise JobError(f"{display}: cannot tell its format; the Spark job reads .ndjson, .jsonl and .parquet files")
        else:
            return
        if kind == "parquet" and status.getLen() < PARQUET_MINIMUM:
            # Spark skips such a file without a word, which would pass it as audited.
            raise JobError(f"{display}: cannot read it: {status.getLen()} bytes is not a Parquet file", IO_ERROR)
        found.setdefault(display, (display, uri, kind))

    for given in inputs:
        path = Path(given)
        fs = path.getFileSystem(conf)
        if not fs.exists(path):
            raise JobError(f"{given}: no such file or folder; give the files or folders to audit")
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
                    # As sealkit audit walks: a link to a folder is not followed (a link to `..` would loop), a
                    # link to a file counts.
                    if not linked_folder(child):
                        pending.append((child, display))
                elif child.isFile():
                    add(display, child, named=False)
    return sorted(found.values(), key=lambda entry: entry[0].encode())


def linked_folder(status):
    """Whether a folder listed is reached through a symbolic link. Hadoop's local file system follows links when
    it lists a folder, so its statuses say "folder", not "link": the link is looked for on the local path."""
    if status.isSymlink():
        return True
    uri = status.getPath().toUri()
    return uri.getScheme() in (None, "file") and os.path.islink(uri.getPath())


def tagged_lines(spark, files):
    """Each line or row as `FILE LINE TEXT`: its file's index and its 1-based line (row) in that file."""
    index = {}
    for number, (_, uri, _) in enumerate(files):
        index[uri] = number
    parts = []
    lines = [uri for _, uri, kind in files if kind == "lines"]
    if lines:
        parts.append(numbered_lines(spark, index, lines))
    parquet = [uri for _, uri, kind in files if kind == "parquet"]
    if parquet:
        parts.append(numbered_rows(spark, index, parquet))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else spark.sparkContext.union(parts)


# Each kind of file is numbered in a function of its own: the closures Spark ships to the executors are
# pickled when a job runs, long after this returns, and must see their own broadcasts, not a name rebound since.


def numbered_lines(spark, index, lines):
    from pyspark.sql import functions as F

    # lineSep "\n": only a line feed ends a line, as for sealkit (which drops a final \r itself). Each line goes
    # on as its bytes (Spark's text keeps them; only a Python str would turn bytes that are not UTF-8 into U+FFFD,
    # a readable value), so sealkit finds such a line unreadable as it does in the file.
    text = spark.read.option("lineSep", "\n").text(lines).select(
        F.col("value").cast("binary").alias("value"), F.col("_metadata.file_path").alias("path"),
        F.col("_metadata.file_block_start").alias("start"))
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
            yield f"{files_index.value[path]} {base.value[key] + offset + 1} ".encode() + bytes(value)

    return rows.mapPartitions(number)


def numbered_rows(spark, index, parquet):
    from pyspark.sql import functions as F

    try:
        tables = [spark.read.option("mergeSchema", "true").parquet(*parquet)]
    except Exception as error:
        if "CANNOT_MERGE" not in str(error):
            raise
        # Files whose columns disagree in type (an export whose schema changed over the years) cannot be read as
        # one table: each is read on its own, and its rows are the JSON they would be alone, as for sealkit.
        tables = [spark.read.parquet(uri) for uri in parquet]

    def as_json(table):
        columns = [F.col("`" + name.replace("`", "``") + "`") for name in table.columns]
        return table.select(
            F.to_json(F.struct(*columns)).alias("value"), F.col("_metadata.file_path").alias("path"),
            F.col("_metadata.row_index").alias("row"))

    rows = as_json(tables[0])
    for table in tables[1:]:
        rows = rows.union(as_json(table))
    paths = [row.path for row in rows.select("path").distinct().collect()]
    files_index = spark.sparkContext.broadcast(resolve_paths(index, set(paths)))
    return rows.rdd.map(lambda row: f"{files_index.value[row.path]} {row.row + 1} {row.value}")


def resolve_paths(index, seen):
    """Spark's `_metadata.file_path` for each file, to its index (the two may spell a URI differently)."""
    by_canonical = {canonical(uri): number for uri, number in index.items()}
    resolved = {}
    for path in seen:
        number = by_canonical.get(canonical(path))
        if number is None:
            raise JobError(f"Spark read {path}, which is not among the files listed", SOFTWARE)
        resolved[path] = number
    return resolved


# MARK: The per-value pass, on the executors


# Digest sizes. The shuffle groups values by their nonce digest, so two nonces must never share one: 32 bytes, where
# telling two apart fails as rarely as guessing a 256-bit key, and the run's key is secret, so no export can be made
# to collide. The copy digest only tells, inside one nonce's group, a copy from another ciphertext, and what it
# digests is sealkit's 16-byte BLAKE2b of the ciphertext: more than 16 bytes would carry nothing more.
NONCE_DIGEST, COPY_DIGEST = 32, 16


def run_key():
    """The key of one run's digests: from the system's CSPRNG, never written down, shipped with the tasks."""
    return secrets.token_bytes(32)


def private_fact(fact, key):
    """A fact of `sealkit audit --facts` as it may leave the executor: a value's nonce and digest keyed.

    sealkit's value facts carry the first 16 bytes of the value's nonce and an unkeyed digest of the whole value.
    For a flagged field holding plaintext that merely looks like base64 (a document, a blob), those are 16 bytes
    of plaintext and a digest anyone can test guesses against. Keyed digests under the run's key still group
    equal nonces and tell copies (equal in, equal out), and say nothing else to whoever reads a shuffle file.
    """
    value = fact.get("value")
    if value is not None:
        nonce, digest = bytes.fromhex(value["nonce"]), bytes.fromhex(value["digest"])
        value["nonce"] = hashlib.blake2b(nonce, digest_size=NONCE_DIGEST, key=key, person=b"sealkit nonce").digest()
        value["digest"] = hashlib.blake2b(digest, digest_size=COPY_DIGEST, key=key, person=b"sealkit copy").digest()
    return fact


def facts_of(sealkit, schema_name, key):
    def run(lines):
        from pyspark import SparkFiles

        command = [sealkit, "audit", "--facts"]
        if schema_name:
            command += ["--schema", SparkFiles.get(schema_name)]
        command.append("-")
        try:
            process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as error:
            raise RuntimeError(
                f"{EXECUTOR_FAILURE} {UNAVAILABLE}: {sealkit}: cannot run it on an executor ({type(error).__name__}); "
                "install sealkit on every worker, or give its path there with --sealkit") from None
        errors = []

        def feed():
            try:
                for line in lines:
                    # NDJSON lines come as their bytes, Parquet rows as the JSON text Spark made of them.
                    process.stdin.write((line if isinstance(line, bytes) else line.encode()) + b"\n")
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
            yield private_fact(json.loads(out), key)
        writer.join()
        stderr = process.stderr.read().decode(errors="replace")
        status = process.wait()
        if status != 0:
            # A bad schema is the user's; anything else from sealkit here is the job's to answer for.
            code = DATA_ERROR if status == DATA_ERROR else SOFTWARE
            raise RuntimeError(f"{EXECUTOR_FAILURE} {code}: sealkit audit --facts exited {status} on an executor: {first_line(stderr)}")
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
        copy = hmac.compare_digest(digest, first[1])
        fact = {"repeat": dict(place, copy=copy, first=first_place)}
        return [(pos, json.dumps(fact), kv[0], copy)]

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
    """Writes the report with sealkit; returns its status and sealkit audit's one-line summary (or error)."""
    base = [sealkit, "audit", "--from-facts"] + (["--schema", args.schema] if args.schema else [])
    process = subprocess.Popen(
        base + ["--format", args.format, "-"], stdin=subprocess.PIPE, stdout=stdout, stderr=subprocess.PIPE)
    # The same facts as a text report, whose last line is the summary `sealkit audit` prints: sealkit's own words
    # for them, not a second rendering here. Its rows are read and dropped.
    text = subprocess.Popen(
        base + ["--format", "text", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    last, said = [], []
    readers = [
        threading.Thread(target=lambda: last.append(last_line(text.stdout)), daemon=True),
        threading.Thread(target=lambda: said.append(process.stderr.read()), daemon=True),
    ]
    for reader in readers:
        reader.start()
    sinks = [process.stdin, text.stdin]

    def send(data):
        for sink in list(sinks):
            try:
                sink.write(data)
            except BrokenPipeError:  # a sealkit that stopped early: its status says why
                sinks.remove(sink)

    done = False
    try:
        send(json.dumps({"files": [display for display, _, _ in files]}).encode() + b"\n")
        if ordered is not None:
            for _, line in ordered.toLocalIterator():
                send(line.encode() + b"\n")
        send(json.dumps({"summary": summary}).encode() + b"\n")
        done = True
    finally:
        for sink in (process.stdin, text.stdin):
            try:
                sink.close()
            except BrokenPipeError:
                pass
        if not done:  # Spark failed while the facts were on their way: no report from half of them
            process.kill()
            text.kill()
        status = process.wait()
        text.wait()
        for reader in readers:
            reader.join(60)
    error = first_line(b"".join(said).decode(errors="replace"))
    return status, error if status >= 2 else last_line_text(last)


def last_line(stream):
    line = b""
    for out in stream:
        if out.strip():
            line = out
    return line


def last_line_text(last):
    return last[0].decode(errors="replace").strip() if last else ""


def sealkit_said(line):
    """sealkit's error line, without its own `sealkit: `, to go after the job's."""
    return line[len("sealkit: "):] if line.startswith("sealkit: ") else line


def special_file(path):
    """Whether `path` is something other than a regular file (/dev/null, a FIFO): written in place, never replaced."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def write_atomically(path, write):
    """Writes a file through a temporary one beside it, renamed over it only when `write` says it succeeded:
    a failed run leaves what was there."""
    if special_file(path):
        try:
            out = open(path, "wb")
        except OSError as error:
            raise JobError(f"{path}: cannot write it: {error.strerror.lower()}", IO_ERROR) from None
        with out:
            return write(out)[1]
    folder = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    try:
        try:
            out = open(temporary, "xb")
        except OSError as error:
            raise JobError(f"{path}: cannot write it: {error.strerror.lower()}", IO_ERROR) from None
        with out:
            ok, result = write(out)
            if ok:
                out.flush()
                os.fsync(out.fileno())
        if ok:
            os.replace(temporary, path)
            try:
                descriptor = os.open(folder, os.O_RDONLY)
                try:
                    os.fsync(descriptor)
                finally:
                    os.close(descriptor)
            except OSError:
                pass
        return result
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def start_spark():
    from pyspark.sql import SparkSession

    try:
        # The job's stage lines say where it is; Spark's own bar would draw over them.
        spark = SparkSession.builder.appName("sealkit audit").config("spark.ui.showConsoleProgress", "false").getOrCreate()
    except Exception as error:
        raise JobError(
            f"Spark did not start ({type(error).__name__}: {first_line(str(error), 200)}); "
            "it needs Java 17 or later: set JAVA_HOME", UNAVAILABLE) from None
    # Quiet unless the user chose a level: a task's failure is said in the job's one line, not a page of log.
    if not spark.sparkContext.getConf().contains("spark.log.level"):
        spark.sparkContext.setLogLevel("FATAL")
    return spark


def main(argv=None, spark=None, console=None):
    """Runs the job; returns its exit status. `spark`: a session to use (left running); `console`: where the
    job's lines go (default: stderr, or spark-submit's)."""
    console = console or Console()
    try:
        args = parse_arguments(sys.argv[1:] if argv is None else argv)
        if args.no_progress:
            console.progress = False
        # The driver writes the report with its own sealkit, found as the executors find theirs.
        sealkit = sealkit_path(args.sealkit)
        check_sealkit(sealkit, args.schema)
        executors = os.path.abspath(args.sealkit) if os.sep in args.sealkit else args.sealkit
        if args.output and not special_file(args.output) and \
                not os.access(os.path.dirname(os.path.abspath(args.output)), os.W_OK | os.X_OK):
            # Said now, not after the whole job has run.
            raise JobError(f"{args.output}: cannot write it: its folder does not exist or is not writable", IO_ERROR)
        own = spark is None
        if own:
            check_runtime()
            console.stage("starting Spark")
            spark = start_spark()
        try:
            return audit(spark, args, sealkit, executors, console)
        finally:
            if own:
                spark.stop()
    except JobError as error:
        console.say(sealkit_said(str(error)))
        return error.status
    except KeyboardInterrupt:
        console.say("interrupted")
        return INTERRUPTED
    except Exception as error:
        console.say(f"internal error: {type(error).__name__}: {first_line(str(error), 200)}")
        return SOFTWARE


def audit(spark, args, sealkit, executors, console):
    console.stage("listing " + " ".join(args.inputs))
    try:
        files = list_inputs(spark, args.inputs, args.schema)
    except JobError:
        raise
    except Exception as error:
        raise spark_failure(error, []) from None
    kinds = [kind for _, _, kind in files]
    console.stage(f"{len(files)} {'file' if len(files) == 1 else 'files'}: "
                  f"{kinds.count('lines')} NDJSON, {kinds.count('parquet')} Parquet")
    facts = None
    try:
        schema_name = None
        if args.schema:
            spark.sparkContext.addFile(os.path.abspath(args.schema))
            schema_name = os.path.basename(args.schema)
        ordered, summary = None, {
            "values": 0, "profiles": 0, "blank_lines": 0, "copied_ciphertexts": 0, "shared_nonces": 0,
            "largest_group": 0, "largest_group_first": None, "keys": {}, "naming_no_key": 0}
        if files:
            console.stage("numbering lines and rows")
            lines = tagged_lines(spark, files)
            if args.partitions:
                lines = lines.repartition(args.partitions)
            facts = lines.mapPartitions(facts_of(executors, schema_name, run_key()))
            facts.persist()
            console.stage("auditing each value: sealkit audit --facts on the executors")
            facts.count()
            console.stage("finding repeats: shuffling the facts by nonce digest, key and file")
            ordered, summary = merge(facts)
        console.stage("writing the report")
        if args.output:
            def write(out):
                result = report(sealkit, args, files, ordered, summary, out)
                return result[0] < 2, result

            status, line = write_atomically(args.output, write)
        else:
            sys.stdout.flush()
            status, line = report(sealkit, args, files, ordered, summary, None)
    except JobError:
        raise
    except Exception as error:
        raise spark_failure(error, files) from None
    finally:
        if facts is not None:
            try:
                facts.unpersist()
            except Exception:  # a session that failed already: the job's line says why
                pass
    if status >= 2:
        raise JobError(sealkit_said(line) or f"sealkit audit --from-facts exited {status}", status)
    console.say(line)
    return status


# MARK: Failures


# Spark's words for a file it could not read, and the job's.
READ_FAILURES = [
    (re.compile(r"AccessDeniedException|Permission denied"), "permission denied"),
    (re.compile(r"FileNotFoundException|PATH_NOT_FOUND"), "it is gone (removed while the job ran?)"),
    (re.compile(r"CANNOT_READ_FILE_FOOTER|ParquetDecodingException|not a Parquet file|EOFException"),
     "truncated, damaged, or not Parquet"),
]
READ_ERROR = re.compile(
    r"FAILED_READ_FILE|CANNOT_READ_FILE_FOOTER|ParquetDecodingException|java\.io\.\w*Exception|AccessDeniedException"
    r"|PATH_NOT_FOUND")


def canonical(uri):
    """A file URI as Spark's messages and `_metadata.file_path` may spell it: unquoted, `file:/` for `file:///`."""
    from urllib.parse import unquote

    text = unquote(uri)
    if text.startswith("file:///"):
        text = "file:/" + text[len("file:///"):]
    return text


def canonical_text(text):
    """A message with every file URI in it spelled as `canonical` spells one."""
    from urllib.parse import unquote

    return unquote(text).replace("file:///", "file:/")


def spark_failure(error, files):
    """One line and a status for an exception out of Spark: sealkit's failure on an executor, a file Spark could
    not read (named), or the job's own. Spark's messages are not quoted: some hold bytes of the file."""
    text = str(error)
    said = re.search(re.escape(EXECUTOR_FAILURE) + r" (\d+): ([^\n]*)", text)
    if said:
        return JobError(said.group(2).strip(), int(said.group(1)))
    # An error in the job's Python on an executor quotes its traceback, paths and all: that is no read error,
    # unless Spark says it failed reading a file.
    spark_read = "FAILED_READ_FILE" in text or "CANNOT_READ_FILE_FOOTER" in text
    if spark_read or (READ_ERROR.search(text) and "Traceback (most recent call last)" not in text):
        reason = next((words for pattern, words in READ_FAILURES if pattern.search(text)), "an I/O error")
        spelled = canonical_text(text)
        named = [display for display, uri, _ in files if canonical(uri) in spelled]
        where = max(named, key=len) if named else "the input"
        return JobError(f"{where}: cannot read it: {reason}", IO_ERROR)
    return JobError(f"internal error: {python_error(text) or type(error).__name__ + ': ' + first_line(text, 200)}", SOFTWARE)


def python_error(text):
    """The exception line of the first Python traceback an executor's error quotes (`KeyError: ...`), if any."""
    lines = text.splitlines()
    try:
        start = next(n for n, line in enumerate(lines) if "Traceback (most recent call last)" in line)
    except StopIteration:
        return None
    for line in lines[start + 1:]:
        if re.match(r"[A-Za-z_][\w.]*(Error|Exception|Exit)\b", line):
            return line[:200]
    return None


if __name__ == "__main__":
    sys.exit(main())
