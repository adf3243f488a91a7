#!/usr/bin/env python3
# Python: it reads sealkit audit's JSON and SARIF with Python's own json module, a reader independent of SealKit's.
"""Runs `sealkit audit` over Fixtures/ and checks it against Fixtures/audit/expected.json.

For Scripts/test. Checks the runs that need no keystore (with and without --schema), in
json format: exactly the expected findings in the expected order; the clean set exits 0
with no findings; and the whole Fixtures/ folder audits without a usage or I/O error.
The runs with --key need a keystore holding specific keys, so the Swift tests do them.

Usage: Scripts/check-audit-fixtures.py [path/to/sealkit]   (default .build/debug/sealkit; run from the repo root)
"""
import json
import os
import subprocess
import sys

SEALKIT = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/sealkit"
BASE = "Fixtures/audit/"


def audit(*args):
    run = subprocess.run([SEALKIT, "audit", *args], capture_output=True, text=True)
    return run.returncode, run.stdout, run.stderr


def fail(message):
    print(f"check-audit-fixtures: {message}", file=sys.stderr)
    sys.exit(1)


expected = json.load(open(BASE + "expected.json"))
for run in expected["runs"]:
    if run["key"]:
        continue
    args = ["--format", "json"] + (["--schema", BASE + run["schema"]] if run["schema"] else []) + [BASE + "planted"]
    status, out, err = audit(*args)
    if status != 1:
        fail(f"{' '.join(args)}: exit {status}, expected 1: {err.strip()}")
    found = []
    for f in json.loads(out)["findings"]:
        entry = {"kind": f["kind"], "severity": f["severity"], "file": f["file"].removeprefix(BASE),
                 "location": f["location"], "field": f["field"]}
        if "places" in f:
            entry["places"] = [{"file": p["file"].removeprefix(BASE), "location": p["location"], "field": p["field"]}
                               for p in f["places"]]
        found.append(entry)
    want = [{k: v for k, v in f.items() if k != "line"} for f in run["findings"]]
    for f in want:
        for p in f.get("places", []):
            p.pop("line", None)
    if found != want:
        fail(f"{' '.join(args)}: findings differ\n got: {json.dumps(found)}\nwant: {json.dumps(want)}")

for args in (["--schema", BASE + "schema.json", BASE + "clean"], [BASE + "clean"]):
    status, out, err = audit(*args)
    if status != 0:
        fail(f"{' '.join(args)}: exit {status}, expected 0:\n{out}{err}")

# Every folder of ciphertext fixtures, but not the protocol vectors (pake/, transfer/, slip39/) or the fuzz seeds
# (fuzz/): those hold SPAKE2 messages, fixed entropy and keys in base64, reused across cases on purpose,
# which are not profile ciphertexts and would read as copies. The profile-seal vectors (seal/) likewise
# remember one seal's MAC (hex, which reads as base64) in several cases on purpose.
PROTOCOL_VECTORS = {"pake", "transfer", "fuzz", "slip39", "seal"}
folders = sorted("Fixtures/" + name for name in os.listdir("Fixtures")
                 if os.path.isdir("Fixtures/" + name) and name not in PROTOCOL_VECTORS)
status, out, err = audit("--format", "json", *folders)
if status not in (0, 1):
    fail(f"Fixtures: exit {status}: {err.strip()}")
report = json.loads(out)
# Outside the planted set, the only finding allowed is the intended one: the secretbox
# vectors tamper with one ciphertext several ways, so each tampered copy repeats its nonce
# (one nonce-reuse finding per repeat, all pointing back at the same first place).
# The v2 vectors hold values under three keys in one JSON object on purpose: one mixed-keys finding.
unplanted = [f for f in report["findings"] if not f["file"].startswith(BASE + "planted/")]
intended = [f for f in unplanted
            if f["kind"] == "nonce-reuse" and {p["file"] for p in f["places"]} == {"Fixtures/secretbox/vectors.json"}]
mixed_v2 = [f for f in unplanted if f["kind"] == "mixed-keys" and f["file"] == "Fixtures/v2/vectors.json"]
if len(mixed_v2) != 1:
    fail("Fixtures/v2/vectors.json: expected one mixed-keys finding, got:\n" + json.dumps(mixed_v2, indent=2))
# v2 values are counted as v1 ones are, or the audit would miss copies of the newer format: the v2 vectors reuse vector 0's ciphertext in the cases that
# read it in another place (a copy each) and tamper with it once (another ciphertext under its nonce).
v2_repeats = [f for f in unplanted if f["kind"] in ("duplicate-ciphertext", "nonce-reuse")
              and {p["file"] for p in f["places"]} == {"Fixtures/v2/vectors.json"}
              and f["places"][1]["location"] == "/vectors/0/ciphertext"]
if not v2_repeats:
    fail("Fixtures/v2/vectors.json: its repeated ciphertexts were not found")
secretbox_first = {json.dumps(f["places"][1]) for f in intended if f["kind"] == "nonce-reuse"}
intended += mixed_v2 + v2_repeats
if len(unplanted) != len(intended) or not intended or len(secretbox_first) != 1:
    fail("Fixtures/ has findings nobody planted:\n" + json.dumps([f for f in unplanted if f not in intended], indent=2))
summary = report["summary"]
print(f"audit fixtures ok; {', '.join(folders)}: {summary['files']} files, {summary['values']} values, "
      f"{sum(summary['findings'].values())} findings (the planted ones, the tampered secretbox vectors and the v2 vectors' repeats)")
