#!/usr/bin/env python3
# Python because it is the long-running share that `swift test` does not run: as root it mounts tmpfs
# file systems, it streams 1 GiB through the binary, and PyNaCl checks independently that keys stay usable.
"""SealKit stress tests, the long share of what the Swift tests check quickly: crash
safety (hundreds of SIGKILLs, rotate and protected keys too), full and read-only disks, bounded memory on
1 GiB inputs, and the strict keystore's unsafe states against every command that meets them.

Only what no Swift test holds is here; concurrency, a held lock, a 10,000-key file, endless input and
crash output live in SealKitCLITests (KeysCLITests, CrashSafetyTests, KeyLifecycleCLITests,
EndlessInputTests, CrashOutputTests) and SealKeystoreTests (StrictKeystoreTests).

Drives the real `sealkit` binary. Every check that fails is printed and makes the exit status 1;
the summary at the end states the figures (kills survived, sizes, peak memory).

    stress.py --sealkit PATH [--kills N] [--only kills,disk,memory,strict] [--memory-bytes N]
"""
import argparse
import base64
import collections
import hashlib
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import nacl.secret

PASSPHRASE = "stress passphrase: correct horse"
failures = []
summary = collections.OrderedDict()


def fail(message):
    failures.append(message)
    print("FAIL: " + message, file=sys.stderr, flush=True)


def check(condition, message):
    if not condition:
        fail(message)
    return condition


class SealKit:
    """Runs sealkit against one keystore."""

    def __init__(self, binary, home):
        self.binary = binary
        self.home = home
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SEALKIT_")}
        self.env["SEALKIT_HOME"] = home
        self.env["SWIFT_BACKTRACE"] = "enable=no"

    def env_for(self, protected):
        env = dict(self.env)
        if protected:
            env["SEALKIT_PASSPHRASE"] = PASSPHRASE
        return env

    def start(self, args, stdin=None, protected=False):
        process = subprocess.Popen(
            [self.binary] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=self.env_for(protected), start_new_session=True)
        return process

    def run(self, args, stdin=b"", protected=False, timeout=60):
        result = subprocess.run(
            [self.binary] + args, input=stdin, capture_output=True, env=self.env_for(protected), timeout=timeout,
            start_new_session=True)
        return result

    def listing(self):
        """{id: (fingerprint, retired count, protected)}, or None when the keystore does not open."""
        result = self.run(["keys", "list"])
        if result.returncode == 66 and result.stderr.startswith(b"sealkit: no keystore at "):
            # Nothing stored yet: a first write killed before it made the folder (sealkit's "no keystore" wording and its status 66).
            return {}
        if result.returncode != 0:
            return None
        entries = {}
        for line in result.stdout.decode().splitlines():
            fields = line.split("\t")
            flags = fields[3:] if len(fields) > 3 else []
            retired = 0
            for flag in flags:
                match = re.match(r"(\d+) retired", flag)
                if match:
                    retired = int(match.group(1))
            entries[fields[0]] = (fields[1], retired, any("protected" in f for f in flags))
        return entries


def clean_failure(result, what):
    """The failure contract: exit 1..125, nothing on stdout, one line on stderr starting 'sealkit: '."""
    stderr = result.stderr.decode(errors="replace")
    ok = check(0 < result.returncode < 126, f"{what}: exit status {result.returncode}: {stderr.strip()}")
    ok &= check(result.stdout == b"", f"{what}: wrote to stdout: {result.stdout[:200]!r}")
    ok &= check(stderr.startswith("sealkit: ") and stderr.count("\n") == 1, f"{what}: stderr is not one line: {stderr!r}")
    return ok


def random_key():
    return os.urandom(32)


def b64(data):
    return base64.b64encode(data).decode()


def nacl_opens(ciphertext, key, plaintext):
    try:
        return nacl.secret.SecretBox(key).decrypt(base64.b64decode(ciphertext)) == plaintext
    except Exception:
        return False


def temporaries(home):
    folder = os.path.join(home, "default")
    if not os.path.isdir(folder):
        return []
    return [name for name in os.listdir(folder) if name.startswith(".tmp-")]


# MARK: Crash safety


def crash_safety(binary, target_kills, seed):
    """SIGKILLs generate, import and rotate at random moments until `target_kills` processes died
    mid-run; after each, the keystore must open, every reported key be intact, and the killed id be
    whole or absent, and absent ids must accept the next generate or import."""
    rng = random.Random(seed)
    home = tempfile.mkdtemp(prefix="sealkit-stress-kills-")
    sealkit = SealKit(binary, home)
    # id -> dict(fingerprint, retired, protected, key (raw, imports only), probe ciphertext, probe plaintext)
    model = {}
    durations = collections.defaultdict(list)
    kills = 0
    killed_states = collections.Counter()
    kills_with_temporary = 0
    completed = 0
    counter = 0
    started = time.time()

    def expected_delay(kind):
        history = durations[kind][-30:]
        typical = sorted(history)[len(history) // 2] if history else 0.05
        # A third of the kills anywhere in the run; the rest late in it, where the write, fsync and
        # rename happen (most of a run is process start-up and, when protected, Argon2id).
        if rng.random() < 1 / 3:
            return rng.uniform(0, typical * 1.1)
        return rng.uniform(typical * 0.8, typical * 1.1)

    def probe(id_, protected):
        plaintext = f"probe for {id_}".encode()
        result = sealkit.run(["encrypt", "--key", id_], stdin=plaintext, protected=protected)
        if not check(result.returncode == 0, f"kills: encrypt with '{id_}' failed: {result.stderr.decode().strip()}"):
            return None, plaintext
        return result.stdout.decode().strip(), plaintext

    def adopt(id_, entry, key, protected):
        ciphertext, plaintext = probe(id_, protected)
        if key is not None and ciphertext is not None:
            check(nacl_opens(ciphertext, key, plaintext), f"kills: '{id_}' holds a key other than the one imported")
        model[id_] = dict(fingerprint=entry[0], retired=entry[1], protected=protected, key=key,
                          ciphertext=ciphertext, plaintext=plaintext)

    def run_op(kind, id_, key, protected, kill_after):
        args = {"generate": ["keys", "generate", id_], "import": ["keys", "import", id_], "rotate": ["keys", "rotate", id_]}[kind]
        if protected and kind != "rotate":
            args = args + ["--protect"]
        begin = time.monotonic()
        process = sealkit.start(args, protected=protected)
        stdin = (b64(key) + "\n").encode() if kind == "import" else b""
        if kill_after is None:
            out, err = process.communicate(stdin)
            durations[kind + str(protected)].append(time.monotonic() - begin)
            return process.returncode, out, err
        try:
            process.stdin.write(stdin)
            process.stdin.close()
        except BrokenPipeError:
            pass
        process.stdin = None
        deadline = begin + kill_after
        while time.monotonic() < deadline and process.poll() is None:
            time.sleep(min(0.002, max(0, deadline - time.monotonic())))
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        if process.returncode == 0:
            durations[kind + str(protected)].append(time.monotonic() - begin)
        return process.returncode, out, err

    while kills < target_kills:
        counter += 1
        choice = rng.random()
        rotatable = [i for i in model]
        if choice < 0.3 or not rotatable:
            kind = "generate"
        elif choice < 0.65:
            kind = "import"
        else:
            kind = "rotate"
        if kind == "rotate":
            id_ = rng.choice(rotatable)
            protected = model[id_]["protected"]
            key = None
        else:
            id_ = f"{kind[0]}{counter}"
            protected = rng.random() < 0.15
            key = random_key() if kind == "import" else None
        before = model.get(id_)
        status, out, err = run_op(kind, id_, key, protected, expected_delay(kind + str(protected)))
        was_killed = status == -signal.SIGKILL
        if was_killed:
            kills += 1
            if temporaries(home):
                kills_with_temporary += 1
        elif not check(status == 0, f"kills: {kind} '{id_}' failed without a kill: {err.decode().strip()}"):
            continue
        else:
            completed += 1

        listing = sealkit.listing()
        if not check(listing is not None, f"kills: the keystore does not open after {kind} '{id_}' (killed: {was_killed})"):
            break
        # Every key whose command reported success is intact.
        for known, state in model.items():
            if known == id_ and kind == "rotate":
                continue
            entry = listing.get(known)
            check(entry is not None and entry[0] == state["fingerprint"] and entry[1] == state["retired"],
                  f"kills: '{known}' changed or vanished after {kind} '{id_}': {entry} != {state['fingerprint']}")

        entry = listing.get(id_)
        if kind == "rotate":
            fields = out.decode().strip().split("\t")
            if not was_killed:
                check(entry is not None and entry[0] == fields[1] and entry[1] == before["retired"] + 1,
                      f"kills: rotate '{id_}' reported {fields} but the keystore holds {entry}")
            else:
                old = entry is not None and entry[0] == before["fingerprint"] and entry[1] == before["retired"]
                new = entry is not None and entry[0] != before["fingerprint"] and entry[1] == before["retired"] + 1
                check(old or new, f"kills: killed rotate left '{id_}' neither old nor new: {entry}")
                killed_states["rotate: old key current" if old else "rotate: new key current"] += 1
            if entry is not None:
                # The key that made the first probe must still open it, current or retired.
                result = sealkit.run(["decrypt", "--key", id_], stdin=before["ciphertext"].encode(), protected=before["protected"])
                check(result.returncode == 0 and result.stdout.rstrip(b"\n") == before["plaintext"],
                      f"kills: '{id_}' no longer opens its old ciphertext after rotate (killed: {was_killed})")
                before["fingerprint"], before["retired"] = entry[0], entry[1]
            continue

        if not was_killed:
            fields = out.decode().strip().split("\t")
            if check(entry is not None and entry[0] == fields[1], f"kills: {kind} '{id_}' reported {fields}, keystore holds {entry}"):
                adopt(id_, entry, key, protected)
            continue
        if entry is not None:
            # Whole: it opens, and an import holds exactly the key given.
            killed_states[f"{kind}: whole"] += 1
            adopt(id_, entry, key, protected)
        else:
            killed_states[f"{kind}: absent"] += 1
            # Nothing may block the next attempt at the same id.
            status, out, err = run_op(kind, id_, key, protected, None)
            if check(status == 0, f"kills: {kind} '{id_}' after a kill was blocked: {err.decode().strip()}"):
                listing = sealkit.listing()
                if check(listing and id_ in listing, f"kills: retried {kind} '{id_}' is not listed"):
                    adopt(id_, listing[id_], key, protected)

    # Every key decrypts its probe at the end, and a write leaves no temporary files behind.
    for id_, state in model.items():
        if state["ciphertext"] is None:
            continue
        result = sealkit.run(["decrypt", "--key", id_], stdin=state["ciphertext"].encode(), protected=state["protected"])
        check(result.returncode == 0 and result.stdout.rstrip(b"\n") == state["plaintext"], f"kills: '{id_}' no longer decrypts")
    check(sealkit.run(["keys", "generate", "final"]).returncode == 0, "kills: final generate failed")
    check(temporaries(home) == [], f"kills: temporary files left after a write: {temporaries(home)}")
    elapsed = time.time() - started
    summary["crash safety"] = (
        f"{kills} SIGKILLs survived ({completed} runs completed before their kill time; "
        f"{kills_with_temporary} kills left a temporary file mid-write); {len(model)} keys intact; "
        + ", ".join(f"{k} {v}" for k, v in sorted(killed_states.items())) + f"; {elapsed:.0f} s")
    shutil.rmtree(home, ignore_errors=True)
    return kills


# MARK: Full and read-only disks


def mount_tmpfs(path, size):
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", path], capture_output=True)
    return result.returncode == 0


def disks(binary):
    root = tempfile.mkdtemp(prefix="sealkit-stress-disk-")
    mounted = os.geteuid() == 0 and mount_tmpfs(root, "512k")
    home = os.path.join(root, "keys")
    sealkit = SealKit(binary, home)
    keys = {}
    for i in range(3):
        keys[f"d{i}"] = random_key()
        check(sealkit.run(["keys", "import", f"d{i}"], stdin=b64(keys[f"d{i}"]).encode()).returncode == 0, "disk: setup import")
    # A key whose file spans several pages, so a write can fail part-way.
    check(sealkit.run(["keys", "generate", "big"]).returncode == 0, "disk: setup generate")
    for _ in range(60):
        sealkit.run(["keys", "rotate", "big"])
    reference = sealkit.listing()
    folder = os.path.join(home, "default")
    before = {name: open(os.path.join(folder, name), "rb").read() for name in os.listdir(folder)}

    def intact(what):
        check(sealkit.listing() == reference, f"disk: {what}: keys changed")
        after = {name: open(os.path.join(folder, name), "rb").read() for name in os.listdir(folder)}
        check(after == before, f"disk: {what}: files changed: {sorted(set(after) ^ set(before))}")
        for id_, key in keys.items():
            result = sealkit.run(["encrypt", "--key", id_], stdin=b"x")
            check(nacl_opens(result.stdout.decode().strip(), key, b"x"), f"disk: {what}: '{id_}' unusable")

    writes = [
        ("generate", ["keys", "generate", "new"], b""),
        ("import", ["keys", "import", "new"], b64(random_key()).encode()),
        ("rotate", ["keys", "rotate", "big"], b""),
        ("rotate small", ["keys", "rotate", "d0"], b""),
        ("delete", ["keys", "delete", "d1"], b""),
    ]
    outcomes = []
    if mounted:
        # Full: fill the file system, then leave one page free, so temporary files can be created
        # but the larger key file cannot be written whole.
        filler = os.path.join(root, "filler")
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError:
            pass
        os.close(fd)
        for free_pages in (0, 1):
            if free_pages:
                with open(filler, "r+b") as f:
                    f.truncate(os.path.getsize(filler) - 4096)
            # With one page free, small key files fit; the big one must fail part-way through its write.
            for label, args, stdin in (writes[:3] if free_pages == 0 else writes[2:3]):
                result = sealkit.run(args, stdin=stdin)
                if clean_failure(result, f"full disk ({free_pages} pages free): {label}"):
                    check(b"space" in result.stderr, f"full disk: {label}: {result.stderr.decode().strip()}")
                    outcomes.append(f"{label} refused" + (" part-way" if free_pages else ""))
                intact(f"full disk, {label}")
        os.unlink(filler)
        check(sealkit.run(["keys", "generate", "after-full"]).returncode == 0, "disk: generate after freeing space failed")
        sealkit.run(["keys", "delete", "after-full"])
        full = ("tmpfs of 512 KiB filled, then one page freed under a 5 KiB key file: "
                + "; ".join(outcomes) + "; keys intact, no temporary files, writes work again once space is freed")

        # Read-only: every write refused, every read works.
        check(subprocess.run(["mount", "-o", "remount,ro", root]).returncode == 0, "disk: remount read-only failed")
        outcomes = []
        for label, args, stdin in writes:
            result = sealkit.run(args, stdin=stdin)
            if clean_failure(result, f"read-only: {label}"):
                check(b"read-only" in result.stderr, f"read-only: {label}: {result.stderr.decode().strip()}")
                outcomes.append(label)
            intact(f"read-only, {label}")
        check(sealkit.listing() is not None, "read-only: list failed")
        subprocess.run(["mount", "-o", "remount,rw", root])
        readonly = "tmpfs remounted read-only: " + ", ".join(outcomes) + " refused with one line; list, encrypt work"
        subprocess.run(["umount", root])
    else:
        # No mounts allowed: a file-size limit (RLIMIT_FSIZE) simulates a full disk. sealkit ignores
        # SIGXFSZ, so write fails with EFBIG. A read-only file system cannot be simulated as well.
        import resource

        def limited():
            resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))

        for label, args, stdin in writes[:3]:
            result = subprocess.run([binary] + args, input=stdin, capture_output=True, env=sealkit.env, preexec_fn=limited)
            if clean_failure(result, f"file-size limit: {label}"):
                outcomes.append(label)
            intact(f"file-size limit, {label}")
        full = "SIMULATED (mount not permitted): RLIMIT_FSIZE 512 bytes: " + ", ".join(outcomes) + " refused"
        readonly = "NOT RUN: mount not permitted"
    summary["full disk"] = full
    summary["read-only disk"] = readonly
    shutil.rmtree(root, ignore_errors=True)


# MARK: Bounded memory


def peak_rss_kb(time_output):
    match = re.search(rb"Maximum resident set size \(kbytes\): (\d+)", time_output)
    return int(match.group(1)) if match else None


def memory(binary, total_bytes):
    """Streams `total_bytes` of lines through encrypt --lines and decrypt --lines, comparing the
    result byte for byte and measuring each process's peak RSS."""
    home = tempfile.mkdtemp(prefix="sealkit-stress-memory-")
    sealkit = SealKit(binary, home)
    check(sealkit.run(["keys", "generate", "m"]).returncode == 0, "memory: setup")
    line = "field value ✓ with some text to seal, 0123456789 abcdefghijklmnopqrstuvwxyz\n".encode()
    lines = total_bytes // len(line)
    block = line * 4096
    enc_time, dec_time = os.path.join(home, "enc.time"), os.path.join(home, "dec.time")
    started = time.time()
    encrypt = subprocess.Popen(["/usr/bin/time", "-v", "-o", enc_time, binary, "encrypt", "--key", "m", "--lines"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=sealkit.env)
    decrypt = subprocess.Popen(["/usr/bin/time", "-v", "-o", dec_time, binary, "decrypt", "--key", "m", "--lines"],
                               stdin=encrypt.stdout, stdout=subprocess.PIPE, env=sealkit.env)
    encrypt.stdout.close()
    received = {"bytes": 0, "hash": hashlib.sha256()}

    def drain():
        while True:
            chunk = decrypt.stdout.read(1 << 20)
            if not chunk:
                break
            received["bytes"] += len(chunk)
            received["hash"].update(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    sent = hashlib.sha256()
    written = 0
    while written < lines:
        count = min(4096, lines - written)
        data = block if count == 4096 else line * count
        encrypt.stdin.write(data)
        sent.update(data)
        written += count
    encrypt.stdin.close()
    encrypt.wait()
    decrypt.wait()
    reader.join()
    elapsed = time.time() - started
    total = lines * len(line)
    check(encrypt.returncode == 0 and decrypt.returncode == 0, f"memory: exit statuses {encrypt.returncode}, {decrypt.returncode}")
    check(received["bytes"] == total, f"memory: {received['bytes']} bytes came back, {total} went in")
    check(received["hash"].digest() == sent.digest(), "memory: the decrypted lines differ from the input")
    enc_rss = peak_rss_kb(open(enc_time, "rb").read())
    dec_rss = peak_rss_kb(open(dec_time, "rb").read())
    limit_kb = 64 * 1024
    check(enc_rss is not None and enc_rss < limit_kb, f"memory: encrypt --lines peaked at {enc_rss} KiB")
    check(dec_rss is not None and dec_rss < limit_kb, f"memory: decrypt --lines peaked at {dec_rss} KiB")
    summary["bounded memory"] = (
        f"{total / 2**30:.2f} GiB ({lines} lines) through encrypt --lines | decrypt --lines, identical on return, "
        f"peak RSS {enc_rss / 1024:.1f} MiB and {dec_rss / 1024:.1f} MiB (limit {limit_kb // 1024} MiB), {elapsed:.0f} s")
    shutil.rmtree(home, ignore_errors=True)


def audit_memory(binary, total_bytes):
    """Streams `total_bytes` of NDJSON profiles through `sealkit audit -` (on stdin, so nothing lands
    on disk; audit refuses a FIFO as a path, as it cannot be read twice) and measures its peak RSS. Each line holds one distinct ciphertext-shaped
    value among ~1 KB of other fields: the auditor's nonce table grows ~24 bytes per distinct
    nonce (docs/audit.md), so the bound allows that and nothing proportional to the bytes."""
    home = tempfile.mkdtemp(prefix="sealkit-stress-audit-")
    sealkit = SealKit(binary, home)
    filler = ("lorem ipsum dolor sit amet " * 36)[:960]
    time_file = os.path.join(home, "audit.time")
    started = time.time()
    # Its outputs go to files, so a report written while it reads cannot block it against this writer.
    report, errors = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    audit = subprocess.Popen(["/usr/bin/time", "-v", "-o", time_file, binary, "audit", "-"],
                             stdin=subprocess.PIPE, stdout=report, stderr=errors, env=sealkit.env)
    lines = 0
    written = 0
    with audit.stdin as out:
        while written < total_bytes:
            chunk = []
            for _ in range(1000):
                value = base64.b64encode(os.urandom(60)).decode()
                chunk.append(f'{{"id":"user-{lines}","notes":"{filler}","ssn":"{value}"}}\n')
                lines += 1
            data = "".join(chunk).encode()
            out.write(data)
            written += len(data)
    audit.wait()
    report.seek(0)
    errors.seek(0)
    stdout, stderr = report.read(), errors.read()
    elapsed = time.time() - started
    check(audit.returncode == 0, f"audit memory: exit {audit.returncode}: {stderr.decode().strip()[:300]}")
    check(f"{lines} values".encode() in stderr + stdout, f"audit memory: the audit did not count {lines} values: {stderr.decode().strip()[:300]}")
    rss = peak_rss_kb(open(time_file, "rb").read())
    limit_kb = 64 * 1024 + lines * 64 // 1024
    check(rss is not None and rss < limit_kb, f"audit memory: peaked at {rss} KiB for {lines} values (limit {limit_kb} KiB)")
    summary["bounded memory (audit)"] = (
        f"{written / 2**30:.2f} GiB of NDJSON ({lines} profiles, one distinct ciphertext-shaped value each) through "
        f"'sealkit audit -' on stdin: peak RSS {rss / 1024:.1f} MiB (limit 64 MiB + 64 bytes per value = "
        f"{limit_kb / 1024:.0f} MiB), {elapsed:.0f} s")
    shutil.rmtree(home, ignore_errors=True)


def tree_digest(path):
    """Every file's content, mode and owner under path: what a refusal must leave unchanged."""
    digest = hashlib.sha256()
    for folder, folders, files in sorted(os.walk(path)):
        folders.sort()
        for name in sorted(files + [f for f in folders if os.path.islink(os.path.join(folder, f))]):
            full = os.path.join(folder, name)
            info = os.lstat(full)
            digest.update(f"{full}:{info.st_mode:o}:{info.st_uid}".encode())
            if os.path.isfile(full) and not os.path.islink(full):
                with open(full, "rb") as handle:
                    digest.update(handle.read())
    return digest.hexdigest()


def strict_modes(binary):
    """Strict modes: a keystore that is not wholly the user's is refused in one line by every command that
    meets it, and left unchanged. (A held lock and a 10,000-key file: StrictKeystoreTests and
    KeyLifecycleCLITests.)"""
    home = tempfile.mkdtemp(prefix="sealkit-stress-strict-")
    root = os.path.join(home, "keys")
    sealkit = SealKit(binary, root)
    for id_ in ["a", "b"]:
        check(sealkit.run(["keys", "generate", id_]).returncode == 0, f"strict: generate {id_}")
    folder = os.path.join(root, "default")
    key_files = sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".key"))
    lock = os.path.join(folder, ".lock")
    other = 65534  # nobody; the stress runs as root, which must refuse what another user planted
    is_root = os.geteuid() == 0

    def owned(path):
        os.chown(path, other, other)
        return lambda: os.chown(path, os.geteuid(), os.getegid())

    def mode(path, bits):
        before = os.lstat(path).st_mode & 0o7777
        os.chmod(path, bits)
        return lambda: os.chmod(path, before)

    def linked(path):
        moved = path + ".real"
        os.rename(path, moved)
        os.symlink(moved, path)
        return lambda: (os.unlink(path), os.rename(moved, path))

    states = [
        ("root folder 1777", lambda: mode(root, 0o1777), "chmod 700"),
        ("root folder 0770", lambda: mode(root, 0o770), "chmod 700"),
        ("namespace folder 0777", lambda: mode(folder, 0o777), "chmod 700"),
        ("key file 0644", lambda: mode(key_files[0], 0o644), "chmod 600"),
        ("lock file 0666", lambda: mode(lock, 0o666), "chmod 600"),
        ("namespace folder a link", lambda: linked(folder), "symbolic link"),
        ("key file a link", lambda: linked(key_files[0]), "symbolic link"),
        ("lock file a link", lambda: linked(lock), "symbolic link"),
    ]
    if is_root:
        states += [
            ("root folder of another user", lambda: owned(root), "chown"),
            ("namespace folder of another user", lambda: owned(folder), "chown"),
            ("key file of another user", lambda: owned(key_files[0]), "chown"),
            ("lock file of another user", lambda: owned(lock), "chown"),
        ]
    passphrase_file = os.path.join(home, "new-passphrase")
    with open(passphrase_file, "w") as handle:
        handle.write(PASSPHRASE + "\n")
    commands = {
        "rotate": ["keys", "rotate", "a"], "generate": ["keys", "generate", "c"], "import": ["keys", "import", "d"],
        "encrypt": ["encrypt", "--key", "a"], "passwd": ["keys", "passwd", "a", "--new-passphrase-file", passphrase_file],
    }
    # Which commands meet each kind of state: folders are met by all, a key file by what reads 'a',
    # the lock file by what writes (reads take no lock).
    meets = {"root": list(commands), "namespace": list(commands), "key": ["rotate", "encrypt", "passwd"],
             "lock": ["rotate", "generate", "import", "passwd"]}
    refusals = 0
    attempts = 0
    for label, make, fix in states:
        undo = make()
        before = tree_digest(home)
        for name in meets[label.split(" ")[0]]:
            args = commands[name]
            stdin = (b64(random_key()) + "\n").encode() if name == "import" else b"x" if name == "encrypt" else b""
            result = sealkit.run(args, stdin=stdin)
            attempts += 1
            what = f"strict: {label}: {name}"
            if clean_failure(result, what):
                refusals += 1
                stderr = result.stderr.decode(errors="replace")
                check(fix in stderr, f"{what}: the message does not name the fix ({fix}): {stderr.strip()}")
                check(result.returncode == 77, f"{what}: exit {result.returncode}, not 77")
        check(tree_digest(home) == before, f"strict: {label}: a refused command changed the keystore")
        undo()
    check(sealkit.run(["encrypt", "--key", "a"], stdin=b"x").returncode == 0, "strict: the keystore is not usable after the checks")
    summary["strict keystore"] = (
        f"{len(states)} unsafe states (foreign owner{'s' if is_root else ' (skipped: not root)'}, open modes, links): "
        f"{refusals} of {attempts} commands meeting them refused in one line, keystore unchanged")
    shutil.rmtree(home, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sealkit", required=True)
    parser.add_argument("--kills", type=int, default=220)
    parser.add_argument("--memory-bytes", type=int, default=1 << 30)
    parser.add_argument("--only", default="kills,disk,memory,strict")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    parts = args.only.split(",")
    print(f"==> stress (seed {seed})", file=sys.stderr, flush=True)
    if "kills" in parts:
        print(f"==> crash safety: {args.kills} SIGKILLs", file=sys.stderr, flush=True)
        crash_safety(args.sealkit, args.kills, seed)
    if "disk" in parts:
        print("==> full and read-only disks", file=sys.stderr, flush=True)
        disks(args.sealkit)
    if "strict" in parts:
        print("==> strict keystore: foreign owners, open modes, links", file=sys.stderr, flush=True)
        strict_modes(args.sealkit)
    if "memory" in parts:
        print(f"==> bounded memory: {args.memory_bytes} bytes through encrypt/decrypt --lines", file=sys.stderr, flush=True)
        memory(args.sealkit, args.memory_bytes)
        print(f"==> bounded memory: {args.memory_bytes} bytes through audit", file=sys.stderr, flush=True)
        audit_memory(args.sealkit, args.memory_bytes)
    print()
    for name, text in summary.items():
        print(f"{name}: {text}")
    if failures:
        print(f"\nstress FAILED: {len(failures)} problem(s)", file=sys.stderr)
        return 1
    print("\nstress passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
