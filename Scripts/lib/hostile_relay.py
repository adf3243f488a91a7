"""A hostile mailbox relay for SealKit's tests: it speaks WebSocket (autobahn, from .venv) but
sends whatever its mode says. The mode is the URL path: ws://127.0.0.1:PORT/MODE.

    hostile_relay.py PORT        prints "ready" once it listens
"""
import json
import sys

from autobahn.twisted.websocket import WebSocketServerFactory, WebSocketServerProtocol
from twisted.internet import reactor


def send(proto, **message):
    proto.sendMessage(json.dumps(message).encode(), False)


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
        elif kind == "open":
            self.misbehave(mode)

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
            # Issue 24: a fake peer side, distinct phases, empty bodies, and never a pake.
            for index in range(100_000):
                send(self, type="message", side=peer, phase="p%d" % index, body="")
        elif mode == "dropafteropen":
            self.dropConnection(abort=True)


factory = WebSocketServerFactory()
factory.protocol = Hostile
reactor.listenTCP(int(sys.argv[1]), factory, interface="127.0.0.1")
reactor.callWhenRunning(lambda: print("ready", flush=True))
reactor.callLater(300, reactor.stop)
reactor.run()
