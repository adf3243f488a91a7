# Python: asks through magic-wormhole's own client library, an implementation independent of SealKit's.
"""Prints, as a JSON array, the nameplates a magic-wormhole mailbox server has in use for an app id.

    .venv/bin/python Scripts/lib/list_nameplates.py ws://127.0.0.1:PORT/v1 APPID

The tests ask this from their synchronous code, so the answer needs nothing of the test process's Swift
cooperative pool, which synchronous tests hold while their subprocesses run. WebSocket through autobahn (a
magic-wormhole dependency); the server's `bind` and `list` messages as magic-wormhole's client sends them.
"""
import asyncio
import json
import sys
from urllib.parse import urlparse

import txaio
from autobahn.asyncio.websocket import WebSocketClientFactory, WebSocketClientProtocol

url, app_id = sys.argv[1], sys.argv[2]
loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
txaio.config.loop = loop
answer = loop.create_future()


class Lister(WebSocketClientProtocol):
    def onOpen(self):
        self.sendMessage(json.dumps({"type": "bind", "appid": app_id, "side": "0000000000", "id": "0001"}).encode())
        self.sendMessage(json.dumps({"type": "list", "id": "0002"}).encode())

    def onMessage(self, payload, is_binary):
        message = json.loads(payload)
        if message.get("type") == "nameplates" and not answer.done():
            answer.set_result([entry["id"] for entry in message["nameplates"]])
            self.sendClose()
        elif message.get("type") == "error" and not answer.done():
            answer.set_exception(RuntimeError(message.get("error")))

    def onClose(self, was_clean, code, reason):
        if not answer.done():
            answer.set_exception(RuntimeError(f"the server closed the connection: {reason}"))


address = urlparse(url)
factory = WebSocketClientFactory(url)
factory.protocol = Lister
loop.run_until_complete(loop.create_connection(factory, address.hostname, address.port))
print(json.dumps(loop.run_until_complete(asyncio.wait_for(answer, 30))))
