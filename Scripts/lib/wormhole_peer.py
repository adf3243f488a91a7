# Python: magic-wormhole's own Python client is the peer SealKit's transfer must interoperate with.
"""A SealKit key-transfer peer built on magic-wormhole's own Python client (the `wormhole`
library), for the interoperability tests and Scripts/bench. It reads and writes SealKit's keys
message itself (docs/transfer.md, "Network transfer"), independently of the Swift code.

    wormhole_peer.py receive RELAY [--versions sealkit|none|sender]
        allocates a code and prints it (stdout line 1), waits for a sender, checks each key
        against its fingerprint, answers {"stored": true}, and prints one JSON line:
        {"ids": [[id, fingerprint, versions], ...]}
    wormhole_peer.py send RELAY [--versions ...] [--ids N] [--bad-time]
        reads the code from stdin (never argv), sends N freshly made keys ("peer-0", ...)
        and prints one JSON line {"answer": ..., "ids": [[id, fingerprint], ...]}
    Exit 3 with "WrongPasswordError" on stderr when the codes differ; 4 when the peer is not SealKit.
"""
import json
import os
import struct
import sys
import time

from twisted.internet import defer
from twisted.internet.task import react

import wormhole
from wormhole.errors import WrongPasswordError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from peer.keys import fingerprint_text, keys_bytes, read_keys  # noqa: E402

APPID = "sealkit/key-transfer/v1"


def versions(kind, role):
    if kind == "none":
        return {}
    if kind == "sender":
        role = "sender"
    return {"sealkit": {"protocol": "key-transfer/v1", "role": role}}


def read_keys_message(data):
    """kind (1) | part (u16) | parts (u16), then the keys (docs/transfer.md, "Keys"), nothing after them."""
    kind, part, parts = struct.unpack(">BHH", data[:5])
    assert kind == 1, "not a keys message"
    ids, rest = read_keys(data[5:])
    assert not rest, "trailing bytes"
    return part, parts, [[name, fingerprint_text(versions[0][0]), len(versions)] for name, versions in ids]


def keys_message(names, bad_time=False):
    now = int(time.time())
    ids = []
    for name in names:
        # --bad-time: the last id's created time is Int64.max, which a receiver must refuse, as no date can show it.
        ids.append((name, [(os.urandom(32), 2**63 - 1 if bad_time and name == names[-1] else now, None)]))
    body = struct.pack(">BHH", 1, 1, 1) + keys_bytes(ids)
    return body, [[name, fingerprint_text(versions[0][0])] for name, versions in ids]


def not_sealkit(theirs, role):
    mine = theirs.get("sealkit") or {}
    return mine.get("protocol") != "key-transfer/v1" or mine.get("role") != role


@defer.inlineCallbacks
def receive(reactor, relay, kind):
    w = wormhole.create(APPID, relay, reactor, versions=versions(kind, "receiver"))
    w.allocate_code()
    code = yield w.get_code()
    print(code, flush=True)
    try:
        theirs = yield w.get_versions()
        if not_sealkit(theirs, "sender"):
            yield close_quietly(w)
            print("not SealKit", file=sys.stderr)
            return 4
        ids, expected, total = [], 1, 1
        while expected <= total:
            part, parts, got = read_keys_message((yield w.get_message()))
            total = parts if expected == 1 else total
            assert part == expected
            ids += got
            expected += 1
        w.send_message(json.dumps({"stored": True}).encode())
        yield w.close()
    except WrongPasswordError:
        print("WrongPasswordError", file=sys.stderr)
        return 3
    print(json.dumps({"ids": ids}), flush=True)
    return 0


@defer.inlineCallbacks
def send(reactor, relay, kind, count, bad_time=False):
    code = sys.stdin.readline().strip()
    w = wormhole.create(APPID, relay, reactor, versions=versions(kind, "sender"))
    w.set_code(code)
    try:
        theirs = yield w.get_versions()
        if not_sealkit(theirs, "receiver"):
            yield close_quietly(w)
            print("not SealKit", file=sys.stderr)
            return 4
        body, shown = keys_message(["peer-%d" % i for i in range(count)], bad_time)
        w.send_message(body)
        answer = json.loads((yield w.get_message()))
        yield w.close()
    except WrongPasswordError:
        print("WrongPasswordError", file=sys.stderr)
        return 3
    print(json.dumps({"answer": answer, "ids": shown}), flush=True)
    return 0


@defer.inlineCallbacks
def close_quietly(w):
    try:
        yield w.close()
    except Exception:
        pass


def main(reactor, *argv):
    # A peer left waiting (its partner refused and left) must not outlive the test.
    reactor.callLater(float(os.environ.get("PEER_TIMEOUT", "60")), os._exit, 5)
    mode, relay = argv[0], argv[1]
    kind = argv[argv.index("--versions") + 1] if "--versions" in argv else "sealkit"
    count = int(argv[argv.index("--ids") + 1]) if "--ids" in argv else 1
    if mode == "receive":
        d = receive(reactor, relay, kind)
    else:
        d = send(reactor, relay, kind, count, "--bad-time" in argv)

    def done(status):
        if status:
            raise SystemExit(status)
    return d.addCallback(done)


if __name__ == "__main__":
    react(main, sys.argv[1:])
