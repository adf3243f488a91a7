# Python: a relay on autobahn (magic-wormhole's own WebSocket stack), so the lies it tells are framed by
# an implementation independent of SealKit's client.
"""A hostile mailbox relay for SealKit's tests: it speaks WebSocket (autobahn, from .venv) but
sends whatever its mode says. The mode is the URL path: ws://127.0.0.1:PORT/MODE.

    hostile_relay.py PORT [SECONDS]   prints "ready" once it listens; stops after SECONDS (300)
"""
import json
import socket
import sys

from autobahn.twisted.websocket import WebSocketServerFactory, WebSocketServerProtocol
from twisted.internet import reactor
from twisted.internet.interfaces import IPushProducer
from zope.interface import implementer


def send(proto, **message):
    proto.sendMessage(json.dumps(message).encode(), False)


@implementer(IPushProducer)
class Pinger:
    """Pings as fast as the socket takes them, pausing while twisted's buffer is full, so the relay's
    own memory stays bounded while the client's socket fills up."""

    def __init__(self, proto):
        self.proto, self.paused, self.stopped = proto, False, False
        proto.transport.registerProducer(self, True)
        self.ping()

    def ping(self):
        if self.stopped:
            return
        if not self.paused:
            for _ in range(64):
                self.proto.sendPing(b"p" * 125)
        reactor.callLater(0.002, self.ping)

    def pauseProducing(self):
        self.paused = True

    def resumeProducing(self):
        self.paused = False

    def stopProducing(self):
        self.stopped = True


# "dropafterkeys": one mailbox, shared by whoever opens it, that forwards messages as a mailbox
# server does until the sender's first keys message (phase "0"): that one reaches the receiver, then
# the relay drops both connections, so the receiver's answer never reaches the sender.
MAILBOX = {"members": [], "messages": []}


class Hostile(WebSocketServerProtocol):
    def onConnect(self, request):
        self.mode = request.path.strip("/")

    def onOpen(self):
        mode = self.mode
        if mode == "notjson":
            self.sendMessage(b"garbage{", False)
        elif mode == "binary":
            self.sendMessage(b"\x00\x01", True)
        elif mode == "huge":
            self.sendMessage(b'{"type": "welcome", "welcome": {"motd": "' + b"x" * 300_000 + b'"}}', False)
        elif mode == "deep":
            self.sendMessage(b"[" * 100_000, False)
        elif mode == "unwelcome":
            send(self, type="welcome", welcome={"error": "go\naway\x1b[31m now"})
        elif mode == "close":
            self.sendClose()
        elif mode == "silent":
            pass
        elif mode == "deaf":
            # A relay that stalls its client: pings for ever, the welcome among them, and never a byte read: the client's
            # pongs fill its socket at once, and every write after them (its bind) stays there.
            self.stopReading(welcome=True)
        else:
            send(self, type="welcome", welcome={})

    def onMessage(self, payload, isBinary):
        message = json.loads(payload)
        kind, mode = message["type"], self.mode
        send(self, type="ack", id=message.get("id"))
        if mode == "servererror" and kind != "bind":
            send(self, type="error", error="crowded\n\x07", orig=message)
        elif kind == "allocate":
            send(self, type="allocated", nameplate="12x" if mode == "badnameplate" else "5")
        elif kind == "claim":
            send(self, type="claimed", mailbox="m1")
        elif mode == "dropafterkeys":
            self.mailbox(message)
        elif kind == "open":
            self.misbehave(mode)

    def mailbox(self, message):
        kind = message["type"]
        if kind == "bind":
            self.side = message["side"]
        elif kind == "open":
            MAILBOX["members"].append(self)
            for stored in MAILBOX["messages"]:
                send(self, **stored)
        elif kind == "add":
            stored = dict(type="message", side=self.side, phase=message["phase"], body=message["body"], id=message.get("id"))
            MAILBOX["messages"].append(stored)
            for member in MAILBOX["members"]:
                send(member, **stored)
            if message["phase"] == "0":
                for member in MAILBOX["members"]:
                    member.dropConnection(abort=False)
                MAILBOX["members"].clear()
        elif kind == "release":
            send(self, type="released")
        elif kind == "close":
            send(self, type="closed")

    def stopReading(self, welcome=False):
        """Reads nothing more, ever, and pings: a small receive buffer, so that the client's socket,
        not ours, holds what it writes, and a burst of pings (the welcome behind it) to fill it."""
        self.transport.getHandle().setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.transport.pauseProducing()
        for _ in range(3_000):
            self.sendPing(b"p" * 125)
        if welcome:
            send(self, type="welcome", welcome={})
        self.pinger = Pinger(self)

    def misbehave(self, mode):
        peer = "ff00ff00ff"
        if mode == "badpake":
            send(self, type="message", side=peer, phase="pake", body=b"not json".hex())
        elif mode == "shortpake":
            send(self, type="message", side=peer, phase="pake", body=json.dumps({"pake_v1": "53"}).encode().hex())
        elif mode == "badhex":
            send(self, type="message", side=peer, phase="pake", body="zz")
        elif mode == "missing":
            send(self, type="message", side=peer, phase="pake")
        elif mode == "flood":
            for index in range(60):
                send(self, type="message", side=peer, phase="x%d" % index, body="00" * 100_000)
        elif mode == "phases":
            # A flood the client must bound: a fake peer side, distinct phases, empty bodies, and never a pake.
            for index in range(100_000):
                send(self, type="message", side=peer, phase="p%d" % index, body="")
        elif mode == "deafafteropen":
            # The nameplate is claimed and the mailbox open; from here on nothing is read, so
            # neither the release nor the close reaches the relay.
            self.stopReading()
        elif mode == "dropafteropen":
            self.dropConnection(abort=True)


factory = WebSocketServerFactory()
factory.protocol = Hostile
reactor.listenTCP(int(sys.argv[1]), factory, interface="127.0.0.1")
reactor.callWhenRunning(lambda: print("ready", flush=True))
reactor.callLater(int(sys.argv[2]) if len(sys.argv) > 2 else 300, reactor.stop)
reactor.run()
