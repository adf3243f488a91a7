"""Profile seals (docs/format.md, "Profile seal"): the MAC a device writes over a profile's flagged fields."""
import hashlib
import struct

from .keys import subkey


def seal_mac(key, fmt, tag, version, user, in_data, entries):
    """BLAKE2b-256, keyed with subkey 1 of context "sksealv1", over: format, key tag, version (u64), the user id
    (u32 length, bytes), in format 2 where the fields sit (1: in `data`), the entry count (u32), then per entry
    in the byte order of its name: name (u32 length, bytes), 0 for null or 1 and the value (u32 length, bytes).
    `entries` is [(name bytes, value bytes or None)], `user` bytes."""
    prefixed = lambda b: struct.pack(">I", len(b)) + b  # noqa: E731
    message = bytes([fmt]) + tag + struct.pack(">Q", version) + prefixed(user)
    if fmt == 2:
        message += bytes([1 if in_data else 0])
    message += struct.pack(">I", len(entries))
    for name, value in sorted(entries, key=lambda entry: entry[0]):
        message += prefixed(name) + (b"\x00" if value is None else b"\x01" + prefixed(value))
    return hashlib.blake2b(message, digest_size=32, key=subkey(key, 1, b"sksealv1")).digest()
