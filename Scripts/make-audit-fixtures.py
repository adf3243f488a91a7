#!/usr/bin/env python3
# Python: the fixtures are sealed with PyNaCl, an implementation independent of SealKit.
"""Generates Fixtures/audit/ with PyNaCl, an implementation independent of SealKit.

  keys/{current,retired,foreign}.key   bare base64 keys; a test keystore holds `retired` rotated to `current`
  schema.json                          the app-config schema for both sets
  schema-planted.json                  the same, but flagging `email` for encryption (identifier-encrypted)
  clean/                               profiles with nothing to find, under every run below
  planted/                             profiles with planted problems of every kind
  expected.json                        for each run (with or without --schema and --key), exactly the
                                       findings the planted set must yield, in the order they are found

Every ciphertext is made here with nacl.secret.SecretBox (nonce || tag || body, as Rownd writes it).
Run: python3 Scripts/make-audit-fixtures.py   (writes into Fixtures/audit/; deterministic)
"""
import base64
import json
import os
import random
import sys

import nacl.secret

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sealkit_v2  # noqa: E402  (v2 ciphertexts, from docs/format.md)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "audit")
rng = random.Random(20261123)
KIND_ORDER = ["plaintext-field", "malformed-ciphertext", "nonce-reuse", "duplicate-ciphertext",
              "undecryptable", "retired-key", "identifier-encrypted", "unreadable-file", "mixed-keys", "unknown-key",
              "v1-in-bound-field", "field-beside-data", "undeclared-field"]
KEY_ID = "audit-user"  # the id the audit tests give --key; v2 values are sealed for it
SEVERITY = {kind: "error" for kind in KIND_ORDER}
SEVERITY.update({"duplicate-ciphertext": "warning", "retired-key": "warning", "undeclared-field": "note"})


def rand(n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def b64(data):
    return base64.b64encode(data).decode("ascii")


CURRENT, RETIRED, FOREIGN = rand(32), rand(32), rand(32)


def seal(key, text, nonce=None):
    return b64(bytes(nacl.secret.SecretBox(key).encrypt(text.encode("utf-8"), nonce or rand(24))))


def fresh(text):
    return seal(CURRENT, text)


# ---------------------------------------------------------------- schema

def schema(email_encrypted):
    def field(kind, encrypted, **extra):
        definition = {"display_name": extra.pop("display", None), "type": kind, "required": False, "owned_by": "user"}
        definition = {k: v for k, v in definition.items() if v is not None}
        if encrypted is not None:
            definition["encryption"] = {"state": "enabled" if encrypted else "disabled"}
            if extra.get("v2"):
                definition["encryption"]["sealkit"] = {"format": 2}
        return definition
    fields = {
        "user_id": field("string", False),
        "email": field("string", email_encrypted),
        "phone_number": field("string", None),
        "first_name": field("string", False),
        "ssn": field("string", True),
        "date_of_birth": field("string", True),
        "credit_score": field("number", True),
        "notes": field("string", True),
        "tax~id/last4": field("string", True),
        "passport": field("string", True, v2=True),
    }
    return {"app": {"id": "app_audit_fixtures", "name": "SealKit audit fixtures", "schema": fields}}


ENCRYPTED = {"ssn", "date_of_birth", "credit_score", "notes", "tax~id/last4", "passport"}
DECLARED = set(schema(False)["app"]["schema"])


def near_encrypted(name):
    """The near-miss rule for undeclared fields, written apart from SealKit's: within two edits (optimal string alignment) of an
    encrypted field's name, as written or with case and the separators _ - . and space left out."""
    def fold(text):
        return "".join(c.lower() if "A" <= c <= "Z" else c for c in text if c not in "_-. ")

    def distance(a, b):
        d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i in range(len(a) + 1):
            d[i][0] = i
        for j in range(len(b) + 1):
            d[0][j] = j
        for i in range(1, len(a) + 1):
            for j in range(1, len(b) + 1):
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
                if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
        return d[len(a)][len(b)]
    return any(min(distance(name, f), distance(fold(name), fold(f))) <= 2 for f in ENCRYPTED)

# ---------------------------------------------------------------- planted values
# A value is plain JSON, or a (tag, ciphertext) pair naming what was planted.

DUP = seal(CURRENT, "1984-02-29")                       # copied into two places
N1, N2 = rand(24), rand(24)
REUSE_X1 = seal(CURRENT, "1990-01-01", N1)              # N1 with two different plaintexts
REUSE_X2 = seal(CURRENT, "987-65-4320", N1)
REUSE_Y1 = seal(CURRENT, "call after 5pm", N2)          # N2: Y1 twice (a copy) and Y2 once
REUSE_Y2 = seal(CURRENT, "555-12-3456", N2)
good = bytearray(base64.b64decode(fresh("tamper me")))
good[45] ^= 0x01
TAMPERED = b64(bytes(good))
MALFORMED = b64(base64.b64decode(fresh("cut short"))[:30])
SECRET = "SSN-123-45-6789"                              # a plaintext that must never appear in a report

P = "plaintext-field"
MIXED = ("~mixed-keys", ("mixed-keys", None))  # not a field: the profile's own finding, after its values
users = [
    [("user_id", "user-0"), ("email", "ada@example.com"), ("first_name", "Ada"), ("ssn", fresh("078-05-1120")),
     ("date_of_birth", ("dup", DUP)), ("credit_score", fresh("712")), ("notes", None)],
    [("user_id", "user-1"), ("email", "bob@example.com"), ("ssn", (P, SECRET)), ("date_of_birth", ("reuse-x", REUSE_X1)),
     ("credit_score", (P, 640)), ("tax~id/last4", (P, "67-89"))],
    [("user_id", "user-2"), ("ssn", ("malformed-ciphertext", MALFORMED)), ("date_of_birth", ("retired-key", seal(RETIRED, "1970-07-07"))),
     ("notes", ("undecryptable", seal(FOREIGN, "made with another key")))],
    [("user_id", "user-3"), ("ssn", ("undecryptable", TAMPERED)), ("notes", ("reuse-y", REUSE_Y1)),
     ("date_of_birth", fresh("2001-09-09"))],
]
export_lines = [
    [("user_id", "user-4"), ("ssn", fresh("111-22-3333")), ("date_of_birth", ("dup", DUP))],
    [("user_id", "user-5"), ("ssn", ("reuse-x", REUSE_X2)), ("first_name", "Eve")],
    None,  # a blank line
    [("user_id", "user-6"), ("ssn", ("reuse-y", REUSE_Y2)), ("notes", ("reuse-y", REUSE_Y1)), ("credit_score", fresh("805"))],
    [("user_id", "user-7"), ("ssn", None), ("credit_score", fresh("700"))],
]
jsonl_lines = [
    [("user_id", "user-8"), ("ssn", fresh("222-33-4444")), ("notes", fresh("likes tea"))],
    '{"user_id": "user-9", "ssn": ',  # broken
    [("user_id", "user-10"), ("ssn", ("retired-key", seal(RETIRED, "333-44-5555")))],
    # A forked key: one v2 value under the user's key, one under a key another device made. (Fixed
    # nonces, so the random stream the other fixtures draw from is unchanged.)
    [("user_id", "user-11"), ("ssn", ("v2", sealkit_v2.seal(CURRENT, KEY_ID, "field", "ssn", b"444-55-6666", bytes(24)))),
     ("notes", ("unknown-key", sealkit_v2.seal(FOREIGN, KEY_ID, "field", "notes", b"other device", bytes([1] * 24)))),
     MIXED],
    # A v1 value in a field the schema makes v2, and a flagged name beside `data` (which then holds
    # the fields). Fixed nonces again, for the same reason.
    [("user_id", "user-12"), ("passport", ("v1-in-bound-field", seal(CURRENT, "X1234567", bytes([2] * 24))))],
    [("user_id", "user-13"), ("ssn", ("field-beside-data", "123-45-6789")), ("data", {})],
    # Fields the schema does not declare. `creditScore` is `credit_score` spelt another way (an
    # error: its value is in plaintext); `favorite_color` is near nothing flagged (a note, once per file).
    [("user_id", "user-14"), ("favorite_color", "green"), ("creditScore", 812), ("ssn", None)],
    [("user_id", "user-15"), ("favorite_color", "blue"), ("ssn_", "987-65-4321")],
]


def plain(profile):
    return {field: (value[1] if isinstance(value, tuple) else value) for field, value in profile if field != MIXED[0]}


def pointer(*tokens):
    return "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in tokens)


# ---------------------------------------------------------------- writing

def write(relative, text):
    path = os.path.join(ROOT, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)


def json_array(profiles):
    """One element per line, so element i starts on line i + 2."""
    return "[\n" + ",\n".join(json.dumps(p, ensure_ascii=False) for p in profiles) + "\n]\n"


write("keys/current.key", b64(CURRENT) + "\n")
write("keys/retired.key", b64(RETIRED) + "\n")
write("keys/foreign.key", b64(FOREIGN) + "\n")
write("schema.json", json.dumps(schema(False), indent=2) + "\n")
write("schema-planted.json", json.dumps(schema(True), indent=2) + "\n")

write("planted/users.json", json_array([{"id": p[0][1], "state": "enabled", "data": plain(p)} for p in users]))
write("planted/export.ndjson", "".join((json.dumps(plain(p)) if p else "") + "\n" for p in export_lines))
write("planted/more/profiles.jsonl",
      "".join((json.dumps(plain(p)) if isinstance(p, list) else p) + "\n" for p in jsonl_lines))
write("planted/not-profiles.json", json_array([{"ssn": fresh("444-55-6666")}, 42]))
write("planted/broken.json", '{"data": {"ssn": "abc"')  # no newline: the error is on line 1

clean_users = [[("user_id", f"clean-{i}"), ("email", f"u{i}@example.com"), ("ssn", fresh(f"100-00-{i:04d}")),
                ("date_of_birth", fresh(f"19{50 + i}-01-01")), ("credit_score", fresh(str(600 + i))),
                ("notes", None if i % 2 else fresh("note " * i)), ("tax~id/last4", fresh(f"{i:04d}"))]
               for i in range(6)]
write("clean/users.json", json_array([{"id": p[0][1], "data": plain(p)} for p in clean_users[:3]]))
write("clean/export.ndjson", "".join(json.dumps(plain(p)) + "\n" for p in clean_users[3:5]))
write("clean/nested/one.json", json.dumps(plain(clean_users[5]), indent=2) + "\n")

# ---------------------------------------------------------------- expected findings

# Every audited value: (file, location, field, line, order, tag, ciphertext or value).
values = []
for index, profile in enumerate(users):
    for order, (field, value) in enumerate(profile):
        values.append(("planted/users.json", pointer(index, "data", field), field, index + 2, order, value))
for number, profile in enumerate(export_lines, start=1):
    for order, (field, value) in enumerate(profile or []):
        values.append(("planted/export.ndjson", number, field, number, order, value))
for number, profile in enumerate(jsonl_lines, start=1):
    if isinstance(profile, list):
        for order, (field, value) in enumerate(profile):
            values.append(("planted/more/profiles.jsonl", number, field, number, order, value))

FILE_ORDER = sorted(["planted/broken.json", "planted/export.ndjson", "planted/more/profiles.jsonl",
                     "planted/not-profiles.json", "planted/users.json"], key=lambda f: f.encode())
UNREADABLE = {
    "planted/broken.json": {"file": "planted/broken.json", "location": "", "field": None, "line": 1},
    "planted/more/profiles.jsonl": {"file": "planted/more/profiles.jsonl", "location": 2, "field": None, "line": 2},
    "planted/not-profiles.json": {"file": "planted/not-profiles.json", "location": "/1", "field": None, "line": 3},
}


def expected_run(with_schema, with_key):
    """Findings in the order a one-pass audit finds them: the schema's, then file by file (sorted
    by path bytes) in document order, each value's own findings before its repeat finding, and a
    file's unreadable-file finding after its values. A ciphertext whose nonce was seen before is
    reported where it repeats, with the place the nonce was first seen as its second place:
    duplicate-ciphertext when it is the same ciphertext, nonce-reuse when it is another."""
    findings = []

    def add(kind, places, severity=None):
        entry = {"kind": kind, "severity": severity or SEVERITY[kind], "file": places[0]["file"],
                 "location": places[0]["location"], "field": places[0]["field"], "line": places[0]["line"]}
        if kind in ("nonce-reuse", "duplicate-ciphertext"):
            entry["places"] = places
        findings.append(entry)

    def place(v):
        return {"file": v[0], "location": v[1], "field": v[2], "line": v[3]}

    if with_schema:
        add("identifier-encrypted",
            [{"file": "schema-planted.json", "location": "/app/schema/email/encryption/state", "field": "email",
              "line": 1}])
    first_seen = {}
    for name in FILE_ORDER:
        warned = set()
        for v in (v for v in values if v[0] == name and (v[2] not in DECLARED or v[2] in ENCRYPTED or not with_schema)):
            # `data` holds a user-state profile's fields: it is not one (the schema defines no field called so).
            if with_schema and v[2] not in DECLARED and v[2] not in (MIXED[0], "data"):
                if near_encrypted(v[2]):
                    add("undeclared-field", [place(v)], "error")
                elif v[2] not in warned:
                    warned.add(v[2])
                    add("undeclared-field", [place(v)], "note")
                continue
            tag = v[5][0] if isinstance(v[5], tuple) else None
            if tag == "mixed-keys":
                add(tag, [dict(place(v), field=None)])
                continue
            if tag == "unknown-key" and with_key:
                add(tag, [place(v)])
            if tag in (P, "malformed-ciphertext", "v1-in-bound-field", "field-beside-data") and with_schema:
                add(tag, [place(v)])
            if tag in ("undecryptable", "retired-key") and with_key:
                add(tag, [place(v)])
            text = v[5][1] if isinstance(v[5], tuple) else v[5]
            if not isinstance(text, str):
                continue
            # Every format's nonce is tracked: v1's starts the bytes, v2's follows its 17-byte header.
            v2 = text.startswith("sk2:")
            try:
                raw = base64.b64decode(text[4:] if v2 else text, validate=True)
            except Exception:
                continue
            if len(raw) < (57 if v2 else 40) or b64(raw) != (text[4:] if v2 else text):
                continue
            nonce = raw[17:41] if v2 else raw[:24]
            if nonce in first_seen:
                seen_place, seen_text = first_seen[nonce]
                add("duplicate-ciphertext" if text == seen_text else "nonce-reuse", [place(v), seen_place])
            else:
                first_seen[nonce] = (place(v), text)
        if name in UNREADABLE:
            add("unreadable-file", [UNREADABLE[name]])
    return findings


runs = []
for with_schema in (False, True):
    for with_key in (False, True):
        runs.append({
            "schema": "schema-planted.json" if with_schema else None,
            "key": with_key,
            "findings": expected_run(with_schema, with_key),
        })

expected = {
    "about": "Findings the planted set yields, per run, in report order. Files are relative to Fixtures/audit/. "
             "'key': true means --key for an id whose keystore holds keys/retired.key rotated to keys/current.key. "
             "'line' is the line a place starts on (SARIF startLine).",
    "generator": f"PyNaCl {nacl.__version__}",
    "secret": SECRET,
    "runs": runs,
}
write("expected.json", json.dumps(expected, indent=2) + "\n")
print(f"wrote {ROOT}", file=sys.stderr)
