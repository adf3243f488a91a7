# Python: a bare magic-wormhole client (autobahn, as list_nameplates.py), independent of SealKit's.
"""Holds a nameplate as a receiver would, until a sender joins it, then lets go of it.

    .venv/bin/python Scripts/lib/hold_nameplate.py ws://127.0.0.1:PORT/v1 APPID NAMEPLATE

Claims NAMEPLATE and opens its mailbox, printing `held`; once another side's message arrives there (a
sender joined), releases the nameplate and closes the mailbox, printing `released`, and exits. The sender
is then the nameplate's only claimant: how the tests check that an interrupted sender releases it.
"""
import asyncio
import json
import sys
from urllib.parse import urlparse

import txaio
from autobahn.asyncio.websocket import WebSocketClientFactory, WebSocketClientProtocol

url, app_id, nameplate = sys.argv[1], sys.argv[2], sys.argv[3]
side = "ffffffffff"
loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
txaio.config.loop = loop
done = loop.create_future()


class Holder(WebSocketClientProtocol):
    def send(self, **message):
        self.sendMessage(json.dumps(message).encode())

    def onOpen(self):
        self.send(type="bind", appid=app_id, side=side, id="0001")
        self.send(type="claim", nameplate=nameplate, id="0002")

    def onMessage(self, payload, is_binary):
        message = json.loads(payload)
        kind = message.get("type")
        if kind == "claimed":
            self.mailbox = message["mailbox"]
            self.send(type="open", mailbox=self.mailbox, id="0003")
            print("held", flush=True)
        elif kind == "message" and message.get("side") != side and not done.done():
            self.send(type="release", nameplate=nameplate, id="0004")
            self.send(type="close", mailbox=self.mailbox, mood="lonely", id="0005")
        elif kind == "closed" and not done.done():
            print("released", flush=True)
            done.set_result(None)
            self.sendClose()
        elif kind == "error" and not done.done():
            done.set_exception(RuntimeError(message.get("error")))


address = urlparse(url)
factory = WebSocketClientFactory(url)
factory.protocol = Holder
loop.run_until_complete(loop.create_connection(factory, address.hostname, address.port))
# Generous: in a full `swift test`, an in-process sender can wait minutes for a thread of Swift's cooperative pool,
# which as many concurrent tests as cores keep busy.
loop.run_until_complete(asyncio.wait_for(done, 300))
