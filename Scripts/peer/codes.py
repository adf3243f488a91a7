"""Base64 forms, text codes (docs/transfer.md, "Text codes") and parts (docs/transfer.md, "Parts")."""
import base64
import hashlib
import re

from . import Outcome

PART_LIMIT = 1200  # a code longer than this goes in parts
PART_ROOM = 1165   # the code characters one part carries: 1200 less "sealkit-part-v1:", the 12-character id, "99/99:" and separators


def b64(data):
    return base64.b64encode(data).decode()


def b64url(data):
    """Unpadded base64url, as every text code writes its body."""
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def b64_strict(text):
    """Standard base64 with padding, canonical: no whitespace, no other alphabet, no stray bits."""
    if len(text) % 4 or not re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", text):
        return None
    try:
        data = base64.b64decode(text, validate=True)
    except ValueError:
        return None
    return data if base64.b64encode(data).decode() == text else None


def b64url_strict(text):
    """Unpadded base64url, canonical."""
    if len(text) % 4 == 1 or not re.fullmatch(r"[A-Za-z0-9_-]*", text):
        return None
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    return data if base64.urlsafe_b64encode(data).decode().rstrip("=") == text else None


def check(kind, body):
    """The 4-byte check a checked code (offer, reply, shares) ends with, so a mistyped code reads as mistyped."""
    return hashlib.blake2b(b"SealKit %s v2 check" % kind.encode() + body, digest_size=16).digest()[:4]


def checked(kind, version, body):
    """`sealkit-KIND-vVERSION:` and the body with its check, in base64url."""
    return f"sealkit-{kind}-v{version}:" + b64url(body + check(kind, body))


def code_body(text, kind):
    """The body of a `sealkit-KIND-v1:` code without a check (a paper backup), or raises Outcome."""
    prefix = f"sealkit-{kind}-v1:"
    if not text.startswith(prefix):
        raise Outcome("unsupported-version" if text.startswith(f"sealkit-{kind}-v") else "malformed")
    body = b64url_strict(text[len(prefix):])
    if body is None:
        raise Outcome("malformed")
    return body


def transfer_id(code):
    """The parts' id: the first 9 bytes of a BLAKE2b of the whole code, 12 characters of base64url."""
    return b64url(hashlib.blake2b(b"SealKit transfer parts v1" + code.encode(), digest_size=16).digest()[:9])


def split_parts(code):
    """Pieces of ceil(L / n) characters, n = ceil(L / 1165), so every writer makes the same lines."""
    if len(code) <= PART_LIMIT:
        return [code]
    count = -(-len(code) // PART_ROOM)
    size = -(-len(code) // count)
    tid = transfer_id(code)
    return [f"sealkit-part-v1:{tid}:{i + 1}/{count}:{code[i * size:(i + 1) * size]}" for i in range(count)]


def join_parts(lines):
    """The whole code from its lines (one code, or its parts in any order), or raises Outcome."""
    lines = [line.strip() for line in lines if line.strip()]
    if len(lines) == 1 and not lines[0].startswith("sealkit-part-v1:"):
        return lines[0]
    pieces, count, transfer = {}, None, None
    for line in lines:
        match = re.fullmatch(r"sealkit-part-v1:([A-Za-z0-9_-]{12}):([1-9][0-9]*)/([1-9][0-9]*):([A-Za-z0-9_:-]+)", line)
        if not match or not 2 <= int(match[3]) <= 99 or not 1 <= int(match[2]) <= int(match[3]):
            raise Outcome("malformed")
        if transfer not in (None, match[1]) or count not in (None, int(match[3])):
            raise Outcome("parts-from-two-transfers")
        transfer, count = match[1], int(match[3])
        if int(match[2]) in pieces:
            raise Outcome("duplicate-part")
        pieces[int(match[2])] = match[4]
    if count is None or len(pieces) != count:
        raise Outcome("missing-parts")
    whole = "".join(pieces[i] for i in range(1, count + 1))
    if transfer_id(whole) != transfer:
        raise Outcome("parts-do-not-fit")
    return whole
