#!/usr/bin/env python3
"""Decode rates per class on Scripts/make-qr-corpus.py's corpus, or Scripts/make-qr-screenshots.py's, in one run:
`sealkit scan`, `zbarimg --raw -Sbinary` and zxing-cpp's Python binding (Debian's python3-zxing-cpp). A decode counts
when the payload comes back byte for byte; an image holding several codes (expected.json lists them) counts when every
one does. Also times one 1920x1080 screenshot holding a code (the corpus' first light-theme screenshot, else one made
from a clean image), sealkit against zbarimg.

  qr_rates.py SEALKIT CORPUS [--json PATH] [--before OLD_SEALKIT]

--before adds a column for another sealkit build (the code before a change) and times it too, in the same run, on
the same images, the runs of the two builds interleaved, so a change to how images are read (such as reading the whole image) is measured under the same load.
"""
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.append("/usr/lib/python3/dist-packages")  # Debian's python3-zxing-cpp
try:
    import zxingcpp
except ImportError:
    zxingcpp = None
from PIL import Image

sealkit, corpus = sys.argv[1], sys.argv[2]
json_path = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
before = sys.argv[sys.argv.index("--before") + 1] if "--before" in sys.argv else None
expected = json.load(open(os.path.join(corpus, "expected.json")))


def run_sealkit(path, binary=sealkit):
    done = subprocess.run([binary, "scan", "--null", path], capture_output=True)
    return [p.decode("utf-8", "replace") for p in done.stdout.split(b"\0")[:-1]] if done.returncode == 0 else []


def run_zbar(path):
    done = subprocess.run(["zbarimg", "--raw", "-q", "-Sbinary", path], capture_output=True)
    # In binary mode zbarimg writes the codes' bytes one after another: each payload is looked for inside.
    return [done.stdout.decode("utf-8", "replace")] if done.returncode == 0 else []


def run_zxing(path):
    if zxingcpp is None:
        return None
    return [r.text for r in zxingcpp.read_barcodes(Image.open(path))]


decoders = {"sealkit": run_sealkit, "zbarimg": run_zbar, "zxing-cpp": run_zxing}
if before:
    decoders = {"sealkit before": lambda path: run_sealkit(path, before), **decoders}
counts = {}
for name, payload in sorted(expected.items()):
    klass = name.split("/")[0]
    path = os.path.join(corpus, name)
    for decoder, run in decoders.items():
        got = run(path)
        if got is None:
            continue
        entry = counts.setdefault(klass, {}).setdefault(decoder, [0, 0])
        wanted = payload if isinstance(payload, list) else [payload]
        entry[0] += all(any(p == g or (decoder == "zbarimg" and p in g) for g in got) for p in wanted)
        entry[1] += 1

rows = []
print("| class | images | %s | sealkit ≥ best peer |" % " | ".join(decoders))
print("|---|---|%s---|" % ("---|" * len(decoders)))
for klass in sorted(counts):
    rates = {d: (c[0] / c[1] if c[1] else None) for d, c in counts[klass].items()}
    best = max((r for d, r in rates.items() if not d.startswith("sealkit") and r is not None), default=0)
    met = rates["sealkit"] >= best
    rows.append({"class": klass, "images": counts[klass]["sealkit"][1], "rates": rates, "met": met})
    cells = ["%.0f%%" % (100 * rates[d]) if rates.get(d) is not None else "n/a" for d in decoders]
    print("| %s | %d | %s | %s |" % (klass, counts[klass]["sealkit"][1], " | ".join(cells), "✓" if met else "✗"))

# Speed: a 1920x1080 screenshot with one code.
light = sorted(n for n in expected if n.startswith("light/"))
if light:
    shot = os.path.join(corpus, light[0])
else:
    screen = Image.new("L", (1920, 1080), 235)
    code = Image.open(os.path.join(corpus, sorted(n for n in expected if n.startswith("clean/"))[0]))
    screen.paste(code, (1500, 600))
    shot = os.path.join(corpus, "screenshot-1080p.png")
    screen.save(shot)
commands = {"sealkit": [sealkit, "scan", shot], "zbarimg": ["zbarimg", "--raw", "-q", "-Sbinary", shot]}
if before:
    commands["sealkit before"] = [before, "scan", shot]
samples = {decoder: [] for decoder in commands}
rounds = 15 if before else 7
for _ in range(rounds):
    # Interleaved, so that a change in the machine's load falls on every command alike.
    for decoder, command in commands.items():
        start = time.perf_counter()
        subprocess.run(command, capture_output=True)
        samples[decoder].append(time.perf_counter() - start)
timings = {decoder: statistics.median(times) for decoder, times in samples.items()}
print("\n1920x1080 screenshot, whole process, median of %d: sealkit %.0f ms, zbarimg %.0f ms (zbarimg ÷ sealkit %.2f)"
      % (rounds, 1000 * timings["sealkit"], 1000 * timings["zbarimg"], timings["zbarimg"] / timings["sealkit"]))
if before:
    print("sealkit before %.0f ms (after ÷ before %.2f)" % (1000 * timings["sealkit before"], timings["sealkit"] / timings["sealkit before"]))
# A --qr option on a 1920x1080 screen holding one offer's code that zbar reads: before the whole-image rule, reading stopped at
# zbar's first code with the option's prefix; now the whole image is read, zxing-cpp too. The offer is not a real one,
# so each run ends, 65, after the scan, before anything else.
option_timings = {}
if before:
    import random
    offer = "sealkit-offer-v2:" + "".join(random.Random(36).choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") for _ in range(100))
    code_png = os.path.join(corpus, "offer-code.png")
    subprocess.run(["qrencode", "-o", code_png, "-s", "4", offer], check=True)
    screen = Image.new("L", (1920, 1080), 235)
    screen.paste(Image.open(code_png).convert("L"), (1500, 600))
    offer_shot = os.path.join(corpus, "offer-1080p.png")
    screen.save(offer_shot)
    option = {name: [binary, "transfer", "send", "u", "--to-qr", offer_shot, "--code", "7-guitarist-revenge", "--format", "text"]
              for name, binary in (("sealkit", sealkit), ("sealkit before", before))}
    import tempfile
    home = tempfile.mkdtemp(prefix="qr-rates-")
    env = dict(os.environ, SEALKIT_HOME=home)
    subprocess.run([sealkit, "keys", "generate", "u"], env=env, capture_output=True, check=True)
    option_samples = {name: [] for name in option}
    for _ in range(rounds):
        for name, command in option.items():
            start = time.perf_counter()
            done = subprocess.run(command, capture_output=True, env=env)
            assert b"offer" in done.stderr, done.stderr  # scanned, then refused as no real offer
            option_samples[name].append(time.perf_counter() - start)
    option_timings = {name: statistics.median(times) for name, times in option_samples.items()}
    print("transfer send --to-qr on a 1920x1080 screen with one code, whole process, median of %d: before %.0f ms, after %.0f ms"
          % (rounds, 1000 * option_timings["sealkit before"], 1000 * option_timings["sealkit"]))
if json_path:
    json.dump({"classes": rows, "screenshot_seconds": timings, "to_qr_seconds": option_timings}, open(json_path, "w"), indent=2)
