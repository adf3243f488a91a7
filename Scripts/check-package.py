#!/usr/bin/env python3
# Python: it drives debootstrap, chroot and apt in a clean Debian root, which has no Swift to run anything else.
"""The Debian package on a clean Debian without Swift, as a user installs it; run by Scripts/test.

    Scripts/check-package.py DEB PEER

DEB is the package Scripts/package made; PEER is the build tree's sealkit, the other end of the
network transfers. First Debian's `lintian` must find no error and no warning in the package.
A Debian bookworm root made by `debootstrap --variant=minbase` (with man-db and
bash-completion, no Swift) is kept as a tarball in .build/clean-machine/ and made once; every run
unpacks a fresh copy, so nothing an earlier run installed can hide a missing dependency. In it
(chroot, with /proc and /dev mounted for the run and unmounted on every way out):

- `apt-get install ./sealkit_*.deb` pulls the runtime libraries from Debian;
- `sealkit --version` prints `sealkit VERSION (COMMIT)`, VERSION the package's; `man sealkit` renders, with its
  ENVIRONMENT and EXIT STATUS;
  bash completes file paths and key ids through bash-completion's loader;
- keys sealed to a TPM: a software TPM (swtpm) runs outside the root on 127.0.0.1, the root gets Debian's
  swtpm TCTI (libtss2-tcti-swtpm0, which the package suggests), and the packaged sealkit makes, lists and uses
  a key `--tpm`; a second swtpm opens nothing of it;
- keys generate, encrypt/decrypt, the Rownd fixture vector, profile encrypt/decrypt on
  Fixtures/profile, `qr --format png` and `scan` of that png (scan opens zbar and zxing-cpp at run time,
  which the binary does not name: a package whose Depends misses them fails here);
- a network transfer through a local mailbox server on 127.0.0.1 (magic-wormhole's, from .venv):
  PEER sends to the packaged sealkit, and the packaged sealkit sends to PEER;
- `apt-get remove sealkit` leaves none of the package's files behind and nothing new.

Exits 0 when all of that holds, else 1 with `check-package: FAIL: ...` naming the step.
SEALKIT_DEBIAN_MIRROR overrides the mirror (default http://deb.debian.org/debian).
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".build" / "clean-machine"
BASE = CACHE / "bookworm-minbase.tar"
MIRROR = os.environ.get("SEALKIT_DEBIAN_MIRROR", "http://deb.debian.org/debian")
SUITE = "bookworm"
# Paths that change as a system runs (package state, caches, logs, the test's own home): not package files.
VOLATILE = ("proc", "dev", "sys", "tmp", "run", "root", "var/cache", "var/lib/apt", "var/lib/dpkg", "var/log")
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class Failure(Exception):
    pass


def log(message):
    print(f"==> {message}", file=sys.stderr, flush=True)


def run(arguments, *, timeout=120, check=True, stdin=None, env=None, cwd=None):
    result = subprocess.run(arguments, input=stdin if stdin is not None else b"", capture_output=True,
                            timeout=timeout, env=env, cwd=cwd)
    if check and result.returncode != 0:
        raise Failure(f"{' '.join(map(str, arguments))} exited {result.returncode}: "
                      f"{result.stderr.decode(errors='replace').strip()[-2000:]}")
    return result


def mounts_below(path):
    """Mount points at or below path, deepest first (from /proc/self/mountinfo)."""
    path = os.path.realpath(path)
    found = []
    with open("/proc/self/mountinfo") as info:
        for line in info:
            point = line.split()[4].replace("\\040", " ")
            if point == path or point.startswith(path + "/"):
                found.append(point)
    return sorted(found, key=len, reverse=True)


def unmount_all(path):
    for point in mounts_below(path):
        if subprocess.run(["umount", point], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", point], capture_output=True)
    left = mounts_below(path)
    if left:
        raise Failure(f"could not unmount {left}")


def remove_root(path):
    """Deletes an unpacked root, never while anything is mounted in it (a bound /dev would go with it)."""
    if not path.exists():
        return
    unmount_all(path)
    shutil.rmtree(path)


def make_base():
    """debootstrap once: minbase, man-db and bash-completion, Debian's security and updates suites."""
    CACHE.mkdir(parents=True, exist_ok=True)
    staging = CACHE / "base.tmp"
    remove_root(staging)
    started = time.monotonic()
    log(f"debootstrap --variant=minbase {SUITE} (once; kept as {BASE.relative_to(ROOT)})")
    run(["debootstrap", "--variant=minbase", "--include=man-db,bash-completion", SUITE, str(staging), MIRROR],
        timeout=1800)
    (staging / "etc/apt/sources.list").write_text(
        f"deb {MIRROR} {SUITE} main\n"
        f"deb {MIRROR} {SUITE}-updates main\n"
        f"deb http://deb.debian.org/debian-security {SUITE}-security main\n")
    run(["tar", "-C", str(staging), "--numeric-owner", "-cf", str(BASE) + ".part", "."], timeout=600)
    os.replace(str(BASE) + ".part", BASE)
    remove_root(staging)
    log(f"debootstrap and tarball: {time.monotonic() - started:.0f} s")


class Machine:
    """A fresh root unpacked from the base tarball, with /proc and /dev mounted while it is in use."""

    def __init__(self):
        self.root = CACHE / "root"

    def __enter__(self):
        remove_root(self.root)
        self.root.mkdir(parents=True)
        run(["tar", "-C", str(self.root), "--numeric-owner", "-xf", str(BASE)], timeout=600)
        shutil.copy("/etc/resolv.conf", self.root / "etc/resolv.conf")
        try:
            run(["mount", "-t", "proc", "proc", str(self.root / "proc")])
            run(["mount", "--bind", "/dev", str(self.root / "dev")])
        except BaseException:
            unmount_all(self.root)
            raise
        return self

    def __exit__(self, *exc):
        # Unmount first, whatever happened; the root is deleted too unless the run asked to keep it.
        unmount_all(self.root)
        if os.environ.get("SEALKIT_KEEP_ROOT") != "1":
            remove_root(self.root)
        return False

    def run(self, arguments, *, timeout=120, check=True, stdin=None, env=None):
        environment = ["PATH=" + PATH, "HOME=/root", "LANG=C.UTF-8", "SEALKIT_HOME=/root/keys",
                       "DEBIAN_FRONTEND=noninteractive"] + [f"{k}={v}" for k, v in (env or {}).items()]
        return run(["chroot", str(self.root), "/usr/bin/env", "-i", *environment, *arguments],
                   timeout=timeout, check=check, stdin=stdin)

    def popen(self, arguments):
        environment = ["PATH=" + PATH, "HOME=/root", "LANG=C.UTF-8", "SEALKIT_HOME=/root/keys"]
        return subprocess.Popen(["chroot", str(self.root), "/usr/bin/env", "-i", *environment, *arguments],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def files(self):
        """Every path in the root (files, folders, links), but for the volatile ones."""
        def volatile(relative):
            return any(relative == v or relative.startswith(v + "/") for v in VOLATILE)
        listed = set()
        for folder, folders, names in os.walk(self.root):
            relative = os.path.relpath(folder, self.root)
            relative = "" if relative == "." else relative
            folders[:] = [f for f in folders if not volatile(os.path.join(relative, f))]
            for name in folders + names:
                if not volatile(os.path.join(relative, name)):
                    listed.add("/" + os.path.join(relative, name))
        return listed


class Mailbox:
    """magic-wormhole's mailbox server from the project's .venv, on a free port of 127.0.0.1."""

    def __enter__(self):
        twist = ROOT / ".venv/bin/twist"
        if not os.access(twist, os.X_OK):
            raise Failure(f"no {twist}: Scripts/test installs magic-wormhole-mailbox-server into .venv")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.process = subprocess.Popen(
            [str(twist), "wormhole-mailbox", f"--port=tcp:{self.port}:interface=127.0.0.1", "--channel-db=:memory:"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir())
        self.relay = f"ws://127.0.0.1:{self.port}/v1"
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.__exit__()
                    raise Failure("the mailbox server did not start")
                time.sleep(0.1)

    def __exit__(self, *exc):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return False


class SoftwareTPM:
    """swtpm on free ports of 127.0.0.1, its state in a temporary folder; stopped on every way out."""

    def __enter__(self):
        self.state = tempfile.mkdtemp(prefix="swtpm-")
        for _ in range(20):
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
            try:
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
            break
        self.tcti = f"swtpm:host=127.0.0.1,port={port}"
        self.process = subprocess.Popen(
            ["swtpm", "socket", "--tpm2", "--tpmstate", f"dir={self.state}",
             "--server", f"type=tcp,port={port},bindaddr=127.0.0.1", "--ctrl", f"type=tcp,port={port + 1},bindaddr=127.0.0.1",
             "--flags", "not-need-init,startup-clear"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return self
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.__exit__()
                    raise Failure("swtpm did not start")
                time.sleep(0.05)

    def __exit__(self, *exc):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.state, ignore_errors=True)
        return False


def expect(condition, message):
    if not condition:
        raise Failure(message)


def transfer(receiver, sender, relay, key_id):
    """receiver() starts `transfer receive`; sender(code) runs `transfer send`; returns the receiver's lines."""
    process = receiver(["transfer", "receive", "--format", "text", "--relay", relay])
    try:
        code = process.stdout.readline().decode().strip()
        if not re.fullmatch(r"[1-9][0-9]*-[a-z]+-[a-z]+", code):
            process.kill()
            raise Failure(f"transfer receive printed {code!r}, not a code: "
                          f"{process.communicate()[1].decode(errors='replace').strip()}")
        sent = sender(["transfer", "send", key_id, "--code", code, "--relay", relay])
        expect(sent.returncode == 0, f"transfer send exited {sent.returncode}: {sent.stderr.decode(errors='replace')}")
        out, err = process.communicate(timeout=90)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    expect(process.returncode == 0, f"transfer receive exited {process.returncode}: {err.decode(errors='replace')}")
    return out.decode().splitlines()


def lintian(deb):
    """Debian's own package checks: no error and no warning (informational tags pass)."""
    log("lintian " + deb.name)
    result = run(["lintian", "--fail-on", "error,warning", "--tag-display-limit", "0", str(deb)], check=False, timeout=600)
    output = (result.stdout + result.stderr).decode(errors="replace")
    tags = [line for line in output.splitlines() if re.match(r"^[EW]: ", line)]
    expect(not tags and result.returncode == 0,
           f"lintian found {len(tags)} errors and warnings (exit {result.returncode}):\n" + (output.strip() or "(no output)"))


def check(deb, peer):
    lintian(deb)
    version = run(["dpkg-deb", "--field", str(deb), "Version"]).stdout.decode().strip()
    with Machine() as machine:
        root = machine.root
        log("no Swift in the clean root")
        expect(machine.run(["sh", "-c", "command -v swift swiftc"], check=False).returncode != 0, "swift is on PATH")
        stray = [p for p in run(["find", str(root / "usr"), "-name", "libswiftCore*"]).stdout.decode().split()]
        expect(not stray, f"the root has the Swift runtime: {stray}")

        log("apt-get install ./" + deb.name)
        machine.run(["apt-get", "update", "-qq"], timeout=600)
        before = machine.files()
        shutil.copy(deb, root / "tmp" / deb.name)
        machine.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "/tmp/" + deb.name], timeout=900)
        installed = machine.files()

        log("sealkit --version")
        shown = machine.run(["sealkit", "--version"], check=False)
        expect(shown.returncode == 0, "sealkit --version exited %d: %s" % (shown.returncode, shown.stderr.decode(errors="replace").strip()))
        line = shown.stdout.decode()
        expect(re.fullmatch(rf"sealkit {re.escape(version)} \([0-9A-Za-z.+-]+\)\n", line),
               f"sealkit --version printed {line!r}; the package's version is {version}")

        log("man sealkit")
        man = machine.run(["man", "-P", "cat", "sealkit"], env={"MANWIDTH": "100"})
        text = man.stdout.decode()
        for word in ("NAME", "End-to-end field encryption", "transfer", "rotate", "ENVIRONMENT", "SEALKIT_PASSPHRASE",
                     "EXIT STATUS", "SEALKIT_TPM_TIMEOUT"):
            expect(word in text, f"man sealkit has no {word!r}")

        log("bash completion: key ids and file paths, through bash-completion's loader")
        machine.run(["sealkit", "keys", "generate", "alice"])
        (root / "root/files").mkdir(parents=True, exist_ok=True)
        (root / "root/files/app-schema.json").write_text("{}")
        (root / "root/files/another.txt").write_text("")

        def complete(line):
            words = line.split(" ")
            script = f"""
                source /usr/share/bash-completion/bash_completion
                cd /root/files
                _completion_loader sealkit
                function=$(complete -p sealkit | sed -n 's/.*-F \\([^ ]*\\) .*/\\1/p')
                [ -n "$function" ] || {{ echo "no completion for sealkit" >&2; exit 3; }}
                COMP_WORDS=({' '.join(f"'{w}'" for w in words)})
                COMP_CWORD={len(words) - 1}
                COMP_LINE='{line}'
                COMP_POINT=${{#COMP_LINE}}
                "$function" sealkit "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
                printf '%s\\n' "${{COMPREPLY[@]}}"
                """
            result = machine.run(["bash", "-c", script])
            return sorted(filter(None, result.stdout.decode().splitlines()))
        expect(complete("sealkit audit --schema app-") == ["app-schema.json"], "bash does not complete file paths")
        files = complete("sealkit scan ")
        expect({"app-schema.json", "another.txt"} <= set(files), f"bash completes 'sealkit scan ' to {files}")
        expect(complete("sealkit keys rotate al") == ["alice"], "bash does not complete key ids")

        log("encrypt/decrypt, the Rownd vector, profile encrypt/decrypt on Fixtures/")
        secret = b"blood type: A+"
        sealed = machine.run(["sealkit", "encrypt", "--key", "alice"], stdin=secret).stdout.decode().strip()
        expect(secret.decode() not in sealed, "encrypt printed the plaintext")
        opened = machine.run(["sealkit", "decrypt", "--key", "alice", "--", sealed]).stdout
        expect(opened.rstrip(b"\n") == secret, "decrypt did not give the plaintext back")
        vector = next(v for v in json.loads((ROOT / "Fixtures/secretbox/vectors.json").read_text())["vectors"]
                      if v["expect"] == "ok")
        machine.run(["sealkit", "keys", "import", "rownd-vector"], stdin=vector["key"].encode() + b"\n")
        opened = machine.run(["sealkit", "decrypt", "--key", "rownd-vector", "--", vector["ciphertext"]]).stdout
        expect(opened.decode().rstrip("\n") == vector["plaintext"], "the Rownd vector did not decrypt")
        shutil.copytree(ROOT / "Fixtures/profile", root / "root/profile")
        encrypted = machine.run(["sealkit", "profile", "encrypt", "--schema", "/root/profile/schema.json",
                                 "--key", "alice", "/root/profile/profile.json"]).stdout
        (root / "root/profile/encrypted.json").write_bytes(encrypted)
        expect(json.loads(encrypted) != json.loads((ROOT / "Fixtures/profile/profile.json").read_text()),
               "profile encrypt changed nothing")
        decrypted = machine.run(["sealkit", "profile", "decrypt", "--schema", "/root/profile/schema.json",
                                 "--key", "alice", "/root/profile/encrypted.json"]).stdout
        expect(json.loads(decrypted) == json.loads((ROOT / "Fixtures/profile/profile.json").read_text()),
               "profile decrypt did not give Fixtures/profile/profile.json back")

        log("qr --format png, and scan of it")
        uri = "sealkit-transfer:7-guitarist-revenge?version=0&rendezvous=ws%3A%2F%2F127.0.0.1%3A4000&role=leader"
        png = machine.run(["sealkit", "qr", "--format", "png", "--", uri]).stdout
        expect(png.startswith(b"\x89PNG\r\n\x1a\n"), "qr --format png did not write a PNG")
        (root / "root/code.png").write_bytes(png)
        scanned = machine.run(["sealkit", "scan", "/root/code.png"]).stdout.decode().strip()
        expect(scanned == uri, f"scan read {scanned!r}")

        log("network transfer through a local mailbox server, both directions")
        host_home = Path(tempfile.mkdtemp(prefix="sealkit-peer."))
        try:
            peer_env = {**os.environ, "SEALKIT_HOME": str(host_home / "keys")}
            peer_env.pop("SEALKIT_PASSPHRASE", None)

            def host(arguments, **kw):
                return run([str(peer), *arguments], env=peer_env, check=False, timeout=120, **kw)

            def host_popen(arguments):
                return subprocess.Popen([str(peer), *arguments], env=peer_env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)

            def listing(lines):
                return sorted(line for line in lines if line.strip())

            expect(host(["keys", "generate", "bob@example.com"]).returncode == 0, "the peer could not make a key")
            with Mailbox() as mailbox:
                received = transfer(lambda a: machine.popen(["sealkit", *a]), host, mailbox.relay, "bob@example.com")
                peer_keys = host(["keys", "list"]).stdout.decode().splitlines()
                mine = machine.run(["sealkit", "keys", "list"]).stdout.decode().splitlines()
                expect([k for k in mine if k.startswith("bob@example.com\t")] == peer_keys,
                       f"the packaged sealkit received {received}, lists {mine}; the peer has {peer_keys}")
                received = transfer(host_popen, lambda a: machine.run(["sealkit", *a], check=False),
                                    mailbox.relay, "alice")
                theirs = [k for k in host(["keys", "list"]).stdout.decode().splitlines() if k.startswith("alice\t")]
                expect(theirs == [k for k in mine if k.startswith("alice\t")],
                       f"the peer received {received}, lists {theirs}")
        finally:
            shutil.rmtree(host_home, ignore_errors=True)

        log("keys sealed to a TPM: swtpm outside the root, Debian's swtpm TCTI inside it")
        # Installed after the package's own checks, so that it cannot stand in for a missing Depends; the
        # removal check below compares with what is installed after it.
        machine.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "libtss2-tcti-swtpm0"], timeout=600)
        installed = machine.files()
        with SoftwareTPM() as tpm, SoftwareTPM() as other:
            env = {"SEALKIT_TPM_TCTI": tpm.tcti}
            made = machine.run(["sealkit", "keys", "generate", "sealed", "--tpm"], env=env, check=False)
            expect(made.returncode == 0, f"keys generate --tpm exited {made.returncode}: {made.stderr.decode(errors='replace')}")
            listed = machine.run(["sealkit", "keys", "list"], env=env).stdout.decode()
            expect(any(line.startswith("sealed\t") and line.endswith("\ttpm") for line in listed.splitlines()),
                   f"keys list does not show tpm: {listed!r}")
            sealed = machine.run(["sealkit", "encrypt", "--key", "sealed"], stdin=secret, env=env).stdout.decode().strip()
            opened = machine.run(["sealkit", "decrypt", "--key", "sealed", "--", sealed], env=env).stdout
            expect(opened.rstrip(b"\n") == secret, "a TPM-sealed key did not decrypt what it encrypted")
            elsewhere = machine.run(["sealkit", "decrypt", "--key", "sealed", "--", sealed],
                                    env={"SEALKIT_TPM_TCTI": other.tcti}, check=False)
            expect(elsewhere.returncode == 77 and not elsewhere.stdout,
                   f"another TPM opened the sealed key (exit {elsewhere.returncode})")

        log("apt-get remove sealkit")
        owned = machine.run(["dpkg", "-L", "sealkit"]).stdout.decode().splitlines()
        machine.run(["apt-get", "remove", "-y", "-qq", "sealkit"], timeout=300)
        after = machine.files()
        new = sorted(after - installed)
        expect(not new, f"apt-get remove left new paths: {new[:20]}")
        for path in owned:
            if path in ("/.", "") or not os.path.lexists(str(root) + path):
                continue
            # A folder other packages share (/usr/bin) stays; anything else of sealkit's must go.
            expect(os.path.isdir(str(root) + path) and not os.path.islink(str(root) + path)
                   and machine.run(["dpkg", "-S", path], check=False).returncode == 0,
                   f"apt-get remove sealkit left {path} behind")
        expect("/usr/bin/sealkit" in installed - before and "/usr/bin/sealkit" not in after,
               "the file lists do not show /usr/bin/sealkit coming and going")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 64
    deb, peer = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    if os.geteuid() != 0:
        print("check-package: FAIL: needs root (debootstrap, chroot, mount)", file=sys.stderr)
        return 1
    # SIGTERM (a CI timeout) unwinds like ^C, through the unmounts.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    started = time.monotonic()
    try:
        if not BASE.exists():
            make_base()
        check(deb, peer)
    except (Failure, subprocess.TimeoutExpired) as failure:
        print(f"check-package: FAIL: {failure}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("check-package: interrupted (the root is unmounted and removed)", file=sys.stderr)
        return 130
    log(f"the package works on a clean {SUITE} ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
