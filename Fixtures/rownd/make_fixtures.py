#!/usr/bin/env python3
"""Writes Fixtures/rownd: user profiles as Rownd's SDKs would have stored them, each with the
outcome `sealkit profile decrypt` must give under --rownd and under the strict default.

An independent implementation: PyNaCl for secretbox, and the SDKs' save path re-done in Python
from their source, not from SealKit's:

- rownd/ios tag 2.8.3, Sources/Rownd/Models/Context/User.swift, UserState.dataAsEncrypted: for each
  top-level key of `data` whose app-schema field has encryption.state "enabled" AND whose value is
  a String, replace it with RowndEncryption.encrypt (Sources/Rownd/framework/Encryption.swift:
  base64 of secretBox.seal, nonce || tag || ciphertext). Anything else stays. If no key can be
  found (ensureEncryptionKey returns nil) nothing is encrypted; a failed encryption keeps the
  plaintext.
- rownd/android tag 3.2.0, models/domain/User.kt, User.dataAsEncrypted: the same rule
  (`entry.value is String`), util/Encryption.kt: base64(nonce + crypto_secretbox_easy).
- meta: rownd/ios commit c036d41 (on the way to 2.9.0), User.swift: UserData.fetch decrypts
  `meta` with dataAsDecrypted; saveMetaData calls `UserState().dataAsEncrypted(meta)` on a blank
  UserState, whose key lookup (getKeyId: no "user_id") fails, so meta is sent in plaintext.

Nonces are derived from the vector and field names so that running this again gives the same
files; the SDKs used random nonces, which readers cannot tell apart.

Usage: make_fixtures.py          writes the files next to this script
       make_fixtures.py --check  exits 1 if the files differ from what it would write
"""
import base64, hashlib, json, os, sys
import nacl.secret

HERE = os.path.dirname(os.path.abspath(__file__))
# Rownd's published test key (rownd/ios 2.8.3 Tests/RowndTests/EncryptionTests.swift): the user's key.
USER_KEY = base64.b64decode("4f4a6IInDuSga0wyQQQpMSrDHIZ/ryoc9w6s5xVF/VQ=")
# A key that another device generated for itself (ensureEncryptionKey makes one when none is stored).
OTHER_DEVICE_KEY = hashlib.sha256(b"rownd fixture: another device's key").digest()

SCHEMA = {"app": {"id": "app_fixture", "name": "Fixture app", "schema": {
    "user_id": {"display_name": "User ID", "type": "string", "required": True, "owned_by": "app"},
    "email": {"display_name": "Email", "type": "string", "owned_by": "user", "encryption": {"state": "disabled"}},
    "first_name": {"display_name": "First name", "type": "string", "owned_by": "user"},
    "ssn": {"display_name": "SSN", "type": "string", "owned_by": "user", "encryption": {"state": "enabled"}},
    "nickname": {"display_name": "Nickname", "type": "string", "owned_by": "user", "encryption": {"state": "enabled"}},
    "middle_name": {"display_name": "Middle name", "type": "string", "encryption": {"state": "enabled"}},
    "credit_score": {"display_name": "Credit score", "type": "number", "encryption": {"state": "enabled"}},
    "is_verified": {"display_name": "Verified", "type": "boolean", "encryption": {"state": "enabled"}},
    "home_address": {"display_name": "Home address", "type": "object", "encryption": {"state": "enabled"}},
    "photo": {"display_name": "Photo", "type": "image", "encryption": {"state": "enabled"}},
    "passport": {"display_name": "Passport scan", "type": "document", "encryption": {"state": "enabled"}},
    "favourite": {"display_name": "Favourite", "type": "any", "encryption": {"state": "enabled"}},
    "lucky_number": {"display_name": "Lucky number", "type": "any", "encryption": {"state": "enabled"}},
    "nothing": {"display_name": "Placeholder", "type": "null", "encryption": {"state": "enabled"}},
    "plan": {"display_name": "Plan", "type": "string"},
}}}
FIELDS = SCHEMA["app"]["schema"]


def flagged(name):
    field = FIELDS.get(name) or {}
    return (field.get("encryption") or {}).get("state") == "enabled"


def seal(vector, field, text, key):
    nonce = hashlib.sha256(f"{vector}/{field}".encode()).digest()[:nacl.secret.SecretBox.NONCE_SIZE]
    sealed = nacl.secret.SecretBox(key).encrypt(text.encode("utf-8"), nonce)  # nonce || tag || ciphertext
    return base64.b64encode(bytes(sealed)).decode()


def sdk_data_as_encrypted(vector, data, key):
    """UserState.dataAsEncrypted (iOS 2.8.3) / User.dataAsEncrypted (Android 3.2.0)."""
    if key is None:  # ensureEncryptionKey returned nil: the data goes out as it is
        return dict(data)
    out = dict(data)
    for name, value in data.items():
        if flagged(name) and isinstance(value, str):  # only Strings; numbers, booleans, objects stay
            out[name] = seal(vector, name, value, key)
    return out


def sdk_data_as_decrypted(data, key):
    """UserState.dataAsDecrypted / network User.dataAsDecrypted: what a Rownd app would show."""
    out = dict(data)
    for name, value in data.items():
        if flagged(name) and isinstance(value, str):
            try:
                raw = base64.b64decode(value, validate=True)
                out[name] = nacl.secret.SecretBox(key).decrypt(raw).decode("utf-8")
            except Exception:
                pass  # "Failed to decrypt user data value": kept as it was
    return out


def changes(stored, expected):
    """The fields whose value decryption changes, as {"data.ssn": plaintext}: every other field must
    come out as stored. (Expectations never repeat a ciphertext, which would read as a reused one.)"""
    diff = {}
    for container in ("data", "meta"):
        before, after = stored.get(container), expected.get(container)
        assert (before is None) == (after is None) and (before is None or list(before) == list(after))
        for name, value in (after or {}).items():
            if before[name] != value:
                diff[f"{container}.{name}"] = value
    assert {k: v for k, v in stored.items() if k not in ("data", "meta")} == \
        {k: v for k, v in expected.items() if k not in ("data", "meta")}
    return diff


def user(data, meta=None):
    """The user as Rownd's API returns it (GET /me/applications/{app}/data)."""
    profile = {"data": data, "redacted": []}
    if meta is not None:
        profile["meta"] = meta
    return profile


BASE = {"user_id": "user_fixture_1", "email": "ada@example.com", "first_name": "Ada"}
HINT = "written by a Rownd app? try --rownd"


def vectors():
    out = []

    def add(name, description, stored, rownd_profile, notes, strict):
        if "profile" in strict:
            strict = {"exit": strict["exit"], "changes": changes(stored, strict["profile"])}
        out.append({"name": name, "file": f"profiles/{name}.json", "description": description,
                    "stored": stored, "expected_rownd": rownd_profile,
                    "rownd": {"exit": 0, "changes": changes(stored, rownd_profile), "notes": notes},
                    "strict": strict})

    # 1. Strings only: both modes agree.
    plain = dict(BASE, ssn="078-05-1120", nickname="Ada ✨ λ \"quoted\"", middle_name="")
    stored = user(sdk_data_as_encrypted("strings", plain, USER_KEY))
    add("strings", "Flagged strings, encrypted by the SDK on save; empty and non-ASCII text included.",
        stored, user(plain), [], {"exit": 0, "profile": user(plain)})

    # 2. A number in a flagged field: the SDK leaves it in plaintext.
    plain = dict(BASE, ssn="078-05-1120", credit_score=812)
    stored = user(sdk_data_as_encrypted("number", plain, USER_KEY))
    add("number-left-in-plaintext", "A number in a flagged field: Rownd encrypts only strings, so 812 is stored as 812.",
        stored, user(plain), ["data.credit_score"],
        {"exit": 65, "error": ["credit_score holds a number, not a ciphertext", HINT]})

    # 3. The app stored the number as text: the SDK encrypted the string "812".
    plain = dict(BASE, credit_score="812")
    stored = user(sdk_data_as_encrypted("number-text", plain, USER_KEY))
    add("number-stored-as-text", "The app put \"812\" (a string) in a number field; the SDK encrypted it as a string. "
        "--rownd gives back the string, as a Rownd app sees it; strict restores the schema's number.",
        stored, user(plain), [], {"exit": 0, "profile": user(dict(plain, credit_score=812))})

    # 4. Booleans and objects stay in plaintext.
    plain = dict(BASE, is_verified=True, home_address={"street": "12 St James's Square", "city": "London"})
    stored = user(sdk_data_as_encrypted("bool-object", plain, USER_KEY))
    add("boolean-and-object-left-in-plaintext", "A boolean and an object in flagged fields, left in plaintext by the SDK.",
        stored, user(plain), ["data.is_verified", "data.home_address"],
        {"exit": 65, "error": ["is_verified holds a boolean, not a ciphertext", "home_address holds an object, not a ciphertext", HINT]})

    # 5. No key on the device when the user was saved: everything went out in plaintext.
    plain = dict(BASE, ssn="078-05-1120", nickname="Countess")
    stored = user(sdk_data_as_encrypted("no-key", plain, None))
    add("encryption-failed", "Saved while the SDK had no key (ensureEncryptionKey returned nil): flagged strings are "
        "plaintext. \"Countess\" is valid base64 of 6 bytes, too short for a ciphertext.",
        stored, user(plain), ["data.ssn", "data.nickname"],
        {"exit": 65, "error": ["ssn cannot be decrypted", "nickname cannot be decrypted", HINT]})

    # 6. Encrypted on another device that generated its own key.
    plain = dict(BASE, ssn="078-05-1120", nickname="Ada")
    mixed = dict(sdk_data_as_encrypted("other-device", {"ssn": plain["ssn"]}, OTHER_DEVICE_KEY))
    stored_data = sdk_data_as_encrypted("this-device", plain, USER_KEY)
    stored_data["ssn"] = mixed["ssn"]
    stored = user(stored_data)
    add("other-device-key", "ssn was encrypted by another device under a key it generated for itself; the SDK keeps "
        "what it cannot open, and so does --rownd.",
        stored, user(dict(plain, ssn=stored_data["ssn"])), ["data.ssn"],
        {"exit": 65, "error": ["ssn cannot be decrypted", "authentication failed", HINT]})

    # 7. meta: sent in plaintext by saveMetaData; a flagged ciphertext in it is decrypted on load.
    plain = dict(BASE, ssn="078-05-1120")
    meta_plain = {"nickname": "Ada L.", "plan": "pro", "ssn": "meta-secret"}
    meta_stored = {"nickname": "Ada L.", "plan": "pro", "ssn": seal("meta/meta", "ssn", "meta-secret", USER_KEY)}
    stored = user(sdk_data_as_encrypted("meta", plain, USER_KEY), meta_stored)
    add("meta", "meta as the iOS SDK (c036d41) sends it: plaintext, since saveMetaData's key lookup on a blank "
        "UserState fails; one flagged ciphertext in it, which UserData.fetch decrypts. Strict mode leaves meta as it is.",
        stored, user(plain, meta_plain), ["meta.nickname"],
        {"exit": 0, "profile": user(plain, meta_stored)})

    # 8. Rownd's other types: the SDK ignores `type`, so every string is encrypted as a string.
    plain = dict(BASE, photo="https://cdn.example.com/u/1.png", passport="files/passport.pdf",
                 favourite="blue", lucky_number=7, nothing=None)
    stored = user(sdk_data_as_encrypted("types", plain, USER_KEY))
    add("image-document-any-null", "image, document, any and null fields. The SDK encrypts the any-typed string "
        "\"blue\" as bare text, which strict mode (any = JSON text) refuses; the number 7 stays in plaintext.",
        stored, user(plain), ["data.lucky_number"],
        {"exit": 65, "error": ["favourite decrypts to text that is not JSON text", "lucky_number holds a number, not a ciphertext", HINT]})

    # What a Rownd app would show must be what --rownd gives.
    for vector in out:
        shown = dict(vector["stored"], data=sdk_data_as_decrypted(vector["stored"]["data"], USER_KEY))
        if "meta" in vector["stored"]:
            shown["meta"] = sdk_data_as_decrypted(vector["stored"]["meta"], USER_KEY)
        assert shown == vector.pop("expected_rownd"), vector["name"]
    return out


def render(value):
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def files():
    written = {"schema.json": render(SCHEMA), "user.key": base64.b64encode(USER_KEY).decode() + "\n"}
    listing = []
    for vector in vectors():
        written[vector["file"]] = json.dumps(vector.pop("stored"), ensure_ascii=False) + "\n"
        listing.append(vector)
    written["vectors.json"] = render({
        "about": "Profiles as Rownd's SDKs stored them (see make_fixtures.py), and what "
                 "'sealkit profile decrypt --schema schema.json --key <user.key>' gives: under --rownd, "
                 "exit 0, the stored profile with 'changes' applied (field path -> value; every other field "
                 "exactly as stored), and a stderr note naming each listed path, in order; under the strict "
                 "default, the same with its own 'changes', or exit 65 with one stderr line containing every "
                 "'error' fragment.",
        "schema": "schema.json", "key": "user.key", "vectors": listing})
    return written


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for name, text in files().items():
        path = os.path.join(HERE, name)
        if check:
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append(name)
            except FileNotFoundError:
                stale.append(name)
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    if stale:
        print("stale: " + ", ".join(stale), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
