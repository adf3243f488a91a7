#!/usr/bin/env python3
# Python: it drives the example packages, a mailbox server from .venv and the sealkit binary, and reads their
# JSON with a reader independent of SealKit's.
"""Builds and runs the two packages in Examples/ as an app developer would, so the documented way in keeps working; run by Scripts/test.

    Scripts/check-examples.py .build/debug/sealkit

- profile-uploader depends on the core `SealKit` product alone. It is built with a `pkg-config` first on PATH that
  knows only libsodium (SwiftPM asks `pkg-config --variable pc_path pkg-config` for the folders and reads `.pc` files
  there itself, so PKG_CONFIG_PATH and PKG_CONFIG_LIBDIR are not enough); its binary must need libsodium and none of
  libsecret, libqrencode, libpng, zbar, zxing, libjpeg or libedit, and hold no swift-nio code. Its upload must have the
  flagged fields sealed, and `sealkit profile decrypt` must give the profile back; a second device (an empty
  keystore) must refuse to make a second key for the user.
- key-receiver receives keys with the async API through a local magic-wormhole mailbox server (from .venv) from
  `sealkit transfer send`, and prints its events, which must come in order.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "Examples"
FORBIDDEN_LIBRARIES = ("libsecret", "libqrencode", "libpng", "libzbar", "libZXing", "libjpeg", "libedit", "libglib")


def fail(message):
    print(f"check-examples: {message}", file=sys.stderr)
    sys.exit(1)


def run(arguments, **options):
    options.setdefault("capture_output", True)
    options.setdefault("text", True)
    options.setdefault("timeout", 120)
    return subprocess.run(arguments, **options)


def build(example, environment=None):
    print(f"==> swift build --package-path Examples/{example}", file=sys.stderr)
    started = time.monotonic()
    result = subprocess.run(["swift", "build", "--package-path", str(EXAMPLES / example)], env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sys.stderr.write(result.stdout)
    if result.returncode != 0:
        fail(f"Examples/{example} does not build")
    # Swift 6 language mode, as the package's own targets: the examples' code builds without warnings too.
    own = re.compile(rf"^{re.escape(str(EXAMPLES / example / 'Sources'))}/[^:]+:[0-9]+:[0-9]+: warning:", re.MULTILINE)
    if own.search(result.stdout):
        fail(f"Examples/{example} builds with warnings (above)")
    print(f"    built in {time.monotonic() - started:.0f} s", file=sys.stderr)
    binary = EXAMPLES / example / ".build" / "debug" / example
    if not binary.is_file():
        fail(f"no {binary} after the build")
    return binary


def sodium_only_environment(scratch):
    """PATH with a pkg-config that knows libsodium's .pc file and nothing else."""
    real = shutil.which("pkg-config")
    if real is None:
        fail("pkg-config is not installed")
    pcfiledir = run([real, "--variable", "pcfiledir", "libsodium"], check=True).stdout.strip()
    only = scratch / "pc"
    only.mkdir()
    shutil.copy(Path(pcfiledir) / "libsodium.pc", only / "libsodium.pc")
    wrapper_dir = scratch / "bin"
    wrapper_dir.mkdir()
    wrapper = wrapper_dir / "pkg-config"
    wrapper.write_text(f"""#!/bin/sh
# SwiftPM's question for the folders it reads .pc files from: only the one holding libsodium.pc.
if [ "$1" = "--variable" ] && [ "$2" = "pc_path" ] && [ "$3" = "pkg-config" ]; then
  echo "{only}"
  exit 0
fi
PKG_CONFIG_LIBDIR="{only}" PKG_CONFIG_PATH="" exec "{real}" "$@"
""")
    wrapper.chmod(0o755)
    environment = dict(os.environ)
    environment["PATH"] = f"{wrapper_dir}:{environment['PATH']}"
    environment["PKG_CONFIG_LIBDIR"] = str(only)
    environment["PKG_CONFIG_PATH"] = ""
    # The wrapper must answer as SwiftPM will ask, or this check proves nothing.
    answered = run(["pkg-config", "--variable", "pc_path", "pkg-config"], env=environment).stdout.strip()
    if answered != str(only) or run(["pkg-config", "--exists", "libsecret-1"], env=environment).returncode == 0:
        fail("the pkg-config wrapper does not hide the other libraries")
    return environment


def check_profile_uploader(sealkit, scratch):
    binary = build("profile-uploader", sodium_only_environment(scratch))
    needed = [line.split("[", 1)[1].rstrip("]") for line in run(["readelf", "-d", str(binary)], check=True).stdout.splitlines()
              if "(NEEDED)" in line]
    if not any(name.startswith("libsodium") for name in needed):
        fail(f"profile-uploader does not link libsodium: {needed}")
    extra = [name for name in needed if name.startswith(FORBIDDEN_LIBRARIES)]
    if extra:
        fail(f"profile-uploader links {extra}: the core product must need libsodium alone")
    symbols = run(["nm", str(binary)], check=True).stdout
    if "NIOCore" in symbols or "NIOPosix" in symbols:
        fail("profile-uploader holds swift-nio code: the core product must not depend on it")
    print(f"    profile-uploader needs {', '.join(needed)}; no swift-nio", file=sys.stderr)

    sample = EXAMPLES / "profile-uploader" / "sample"
    keystore = scratch / "laptop"
    upload = run([str(binary), "--keystore", str(keystore), "--user", "ada", str(sample / "schema.json"), str(sample / "profile.json")])
    if upload.returncode != 0:
        fail(f"profile-uploader failed: {upload.stderr.strip()}")
    original = json.loads((sample / "profile.json").read_text())
    sealed = json.loads(upload.stdout)
    if sealed["name"] != original["name"] or not isinstance(sealed["ssn"], str) or sealed["ssn"] == original["ssn"] \
            or not str(sealed["salary"]).startswith("sk2:"):
        fail(f"profile-uploader's upload is not what the schema asks for: {upload.stdout.strip()}")
    opened = run([str(sealkit), "profile", "decrypt", "--schema", str(sample / "schema.json"), "--key", "ada"],
                 input=upload.stdout, env={**os.environ, "SEALKIT_HOME": str(keystore)})
    if opened.returncode != 0 or json.loads(opened.stdout) != original:
        fail(f"sealkit profile decrypt does not give the profile back: {opened.stderr.strip()}")
    # A second device with no key: the upload shows the user has one elsewhere, so none is made.
    uploaded = scratch / "uploaded.json"
    uploaded.write_text(upload.stdout)
    phone = scratch / "phone"
    second = run([str(binary), "--keystore", str(phone), "--user", "ada", str(sample / "schema.json"), str(uploaded)])
    listed = run([str(sealkit), "keys", "list"], env={**os.environ, "SEALKIT_HOME": str(phone)})
    # 3 is the example's own status for SealKitError.Reason.keyElsewhere: the reason reached the app typed.
    if second.returncode != 3 or second.stderr.count("\n") != 1 or listed.stdout.strip():
        fail(f"a second device made a second key for the user: {second.stderr.strip()} / {listed.stdout.strip()}")
    print("    profile-uploader: flagged fields sealed, opened by sealkit, no second key on a second device", file=sys.stderr)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_mailbox_server():
    twist = ROOT / ".venv" / "bin" / "twist"
    if not twist.exists():
        fail(f"no {twist}: Scripts/test installs magic-wormhole-mailbox-server into .venv")
    port = free_port()
    server = subprocess.Popen([str(twist), "wormhole-mailbox", f"--port=tcp:{port}:interface=127.0.0.1", "--channel-db=:memory:"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server, f"ws://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.2)
    server.kill()
    fail("the mailbox server did not start")


def check_key_receiver(sealkit, scratch):
    binary = build("key-receiver")
    server, relay = start_mailbox_server()
    receiver = None
    try:
        sending = {**os.environ, "SEALKIT_HOME": str(scratch / "old-device")}
        if run([str(sealkit), "keys", "generate", "alice"], env=sending).returncode != 0:
            fail("sealkit keys generate failed")
        fingerprint = run([str(sealkit), "keys", "list"], env=sending, check=True).stdout.split("\t")[1]
        receiver = subprocess.Popen([str(binary), "--keystore", str(scratch / "new-device"), "--relay", relay],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        code = receiver.stdout.readline().strip()
        if not code:
            fail(f"key-receiver showed no code: {receiver.stderr.read().strip()}")
        sent = run([str(sealkit), "transfer", "send", "alice", "--code", code, "--relay", relay], env=sending)
        if sent.returncode != 0:
            fail(f"sealkit transfer send to key-receiver failed: {sent.stderr.strip()}")
        output, errors = receiver.communicate(timeout=60)
        if receiver.returncode != 0:
            fail(f"key-receiver failed: {errors.strip()}")
        expected = ["event: peer joined", f"event: keys offered: alice {fingerprint}", "event: stored", f"stored alice {fingerprint}"]
        if output.splitlines() != expected:
            fail(f"key-receiver's events are not in order: {output.splitlines()} (expected {expected})")
        stored = run([str(sealkit), "keys", "list"], env={**os.environ, "SEALKIT_HOME": str(scratch / "new-device")}).stdout
        if stored.split("\t")[:2] != ["alice", fingerprint]:
            fail(f"key-receiver did not store alice's key: {stored.strip()}")
        print("    key-receiver: code, peer joined, keys offered, stored, in order; the key is in its keystore", file=sys.stderr)
    finally:
        if receiver is not None and receiver.poll() is None:
            receiver.kill()
        server.kill()
        server.wait()


def main():
    if len(sys.argv) != 2:
        fail("usage: Scripts/check-examples.py SEALKIT_BINARY")
    sealkit = Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        (scratch / "uploader").mkdir()
        (scratch / "receiver").mkdir()
        check_profile_uploader(sealkit, scratch / "uploader")
        check_key_receiver(sealkit, scratch / "receiver")


if __name__ == "__main__":
    main()
