#!/usr/bin/env python3
# Python: it drives swtpm and the built sealkit (no TPM library of its own), like the other fixture makers.
"""Makes the TPM key-file vectors: Fixtures/tpm/state (a fixed swtpm state: the TPM's seeds) and
Fixtures/tpm/vectors.json, key files sealed to that state by the built sealkit, each with its expected outcome:

  ok           opens (without a PIN, and with its PIN), with a ciphertext and its plaintext
  wrong-pin    a PIN-sealed file given the wrong PIN
  another-tpm  a file sealed to a different swtpm, whose state is not kept
  tampered     a file whose sealed object has one flipped byte

Run after `swift build`: python3 Scripts/make-tpm-vectors.py [path/to/sealkit]. It makes a NEW state, so every
vector changes; run it only to replace the vectors, and commit the state and vectors together. The keys are test-only.
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "Fixtures" / "tpm"


class SoftwareTPM:
    def __init__(self, state):
        self.state = state

    def __enter__(self):
        while True:
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
            try:
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", port + 1))
                break
            except OSError:
                continue
        self.tcti = f"swtpm:host=127.0.0.1,port={port}"
        self.process = subprocess.Popen(
            ["swtpm", "socket", "--tpm2", "--tpmstate", f"dir={self.state}", "--server", f"type=tcp,port={port},bindaddr=127.0.0.1",
             "--ctrl", f"type=tcp,port={port + 1},bindaddr=127.0.0.1", "--flags", "not-need-init,startup-clear"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.__exit__()
        sys.exit("swtpm did not start")

    def __exit__(self, *exc):
        self.process.terminate()
        self.process.wait(10)
        return False


def main():
    sealkit = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / ".build/debug/sealkit")
    home = Path(tempfile.mkdtemp(prefix="tpm-vectors."))
    try:
        state = OUT / "state"
        shutil.rmtree(state, ignore_errors=True)
        state.mkdir(parents=True)
        elsewhere = home / "other-state"
        elsewhere.mkdir()

        def run(arguments, tpm, stdin=b"", pin=None, keys="keys"):
            env = {"PATH": os.environ["PATH"], "SEALKIT_HOME": str(home / keys), "SEALKIT_TPM_TCTI": tpm.tcti}
            if pin is not None:
                env["SEALKIT_PASSPHRASE"] = pin
            result = subprocess.run([sealkit, *arguments], input=stdin, env=env, capture_output=True, check=True)
            return result.stdout.decode().strip()

        def key_file(keys, name):
            folder = home / keys / "default"
            for path in folder.glob("*.key"):
                text = path.read_text()
                if f"\nid {base64.b64encode(name.encode()).decode()}\n" in text:
                    return text
            sys.exit(f"no key file for {name}")

        vectors = []
        with SoftwareTPM(state) as tpm:
            run(["keys", "generate", "opens", "--tpm"], tpm)
            run(["keys", "generate", "opens-with-pin", "--tpm", "--tpm-pin"], tpm, pin="fixture-pin")
            run(["keys", "generate", "tampered", "--tpm"], tpm)
            for name, pin in (("opens", None), ("opens-with-pin", "fixture-pin")):
                plaintext = f"plaintext of {name}"
                ciphertext = run(["encrypt", "--key", name], tpm, stdin=plaintext.encode(), pin=pin)
                vectors.append({"name": name, "id": name, "file": key_file("keys", name), "pin": pin, "expect": "ok",
                                "ciphertext": ciphertext, "plaintext": plaintext})
            vectors.append({"name": "wrong PIN", "id": "opens-with-pin", "file": key_file("keys", "opens-with-pin"),
                            "pin": "not-the-pin", "expect": "wrong-pin"})
            lines = key_file("keys", "tampered").split("\n")
            fields = lines[2].split(" ")
            blob = bytearray(base64.b64decode(fields[4]))
            blob[-3] ^= 0x01
            fields[4] = base64.b64encode(bytes(blob)).decode()
            lines[2] = " ".join(fields)
            vectors.append({"name": "flipped byte in the sealed object", "id": "tampered", "file": "\n".join(lines), "pin": None,
                            "expect": "tampered"})
        with SoftwareTPM(elsewhere) as other:
            run(["keys", "generate", "another-tpm", "--tpm"], other, keys="other")
            vectors.append({"name": "sealed to another TPM", "id": "another-tpm", "file": key_file("other", "another-tpm"),
                            "pin": None, "expect": "another-tpm"})
        (OUT / "vectors.json").write_text(json.dumps({
            "description": "Key files sealed to the swtpm whose state is Fixtures/tpm/state (docs/format.md, "
                           "'Sealed to the TPM'); made by Scripts/make-tpm-vectors.py. Test-only keys.",
            "vectors": vectors}, indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {OUT / 'vectors.json'} ({len(vectors)} vectors) and {state}")
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
