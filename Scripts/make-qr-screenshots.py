#!/usr/bin/env python3
# Python: the screenshots are cropped, scaled and blurred with Pillow.
"""Makes a corpus of real terminal screenshots of SealKit's own QR codes, from fixed seeds, into a folder
(not committed: Scripts/bench and the tests make it again).

  make-qr-screenshots.py SEALKIT OUT [--small]    writes OUT/<class>/<n>.png and OUT/expected.json
  make-qr-screenshots.py SEALKIT OUT.png --pair LEFT RIGHT [--dark]
                                                  one shot of two windows side by side, LEFT's code and RIGHT's
                                                  (the tests' screenshot of an offer and its reply)

Each code is drawn by `sealkit qr` in xterm under Xvfb (1920 x 1080) and the whole screen is taken with xwd:
five payloads shaped like the real ones (network code URI, offer, reply, paper backup, share bundle), two font sizes
(DejaVu Sans Mono at 10 and 14 points, the monospaced font fonts-dejavu-core has), light and dark themes, NO_COLOR on (utf8, the terminal's
own colours) and off (ansi, black on white), one window or two side by side (two codes on one desktop, at 10
points: at 14 a reply's code does not fit beside another window). Then
photo-like variants of the one-window shots with Pillow: perspective, blur, JPEG quality 30, noise, downscale by
half, negate, and all of negate + perspective + blur + JPEG 30 together. expected.json maps each image to the list
of payloads it holds. --small makes a test-sized subset (one payload a class).
"""
import base64
import io
import json
import os
import random
import subprocess
import sys
import time

from PIL import Image, ImageFilter, ImageOps

sealkit, out = sys.argv[1], sys.argv[2]
small = "--small" in sys.argv
rng = random.Random(20261130)


def b64url(n):
    return base64.urlsafe_b64encode(bytes(rng.getrandbits(8) for _ in range(n))).decode().rstrip("=")


PAYLOADS = [
    ("code", "sealkit-transfer:7-guitarist-revenge?version=0&rendezvous=ws%3A%2F%2Frelay.magic-wormhole.io%3A4000&role=leader"),
    ("offer", "sealkit-offer-v2:" + b64url(110)),
    ("reply", "sealkit-reply-v2:" + b64url(300)),
    ("backup", "sealkit-backup-v1:" + b64url(180)),
    ("bundle", "sealkit-shares-v1:" + b64url(160)),
]
FONTS = [("dejavu10", ["-fa", "DejaVu Sans Mono", "-fs", "10"]), ("dejavu14", ["-fa", "DejaVu Sans Mono", "-fs", "14"])]
THEMES = [("light", ["-bg", "#ffffff", "-fg", "#202020"]), ("dark", ["-bg", "#1e1e1e", "-fg", "#d0d0d0"])]

display = subprocess.Popen(["Xvfb", "-displayfd", "1", "-screen", "0", "1920x1080x24", "-nolisten", "tcp"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
number = display.stdout.readline().decode().strip()
env = dict(os.environ, DISPLAY=":" + number, LANG="C.UTF-8", LC_ALL="C.UTF-8")
env.pop("NO_COLOR", None)
expected = {}
counters = {}


def shot(windows, font, theme, no_color):
    """The whole screen with one xterm a payload, each showing `sealkit qr` of it and waiting."""
    terminals = []
    for index, payload in enumerate(windows):
        command = ("%s qr -- '%s'; sleep 60" % (sealkit, payload))
        child_env = dict(env, NO_COLOR="1") if no_color else env
        terminals.append(subprocess.Popen(
            ["xterm", "-u8", "-geometry", "92x50+%d+30" % (20 + index * 880)] + font + theme + ["-e", "sh", "-c", command],
            env=child_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    time.sleep(1.5 + 0.5 * len(windows))
    xwd = subprocess.run(["xwd", "-root", "-silent"], env=env, capture_output=True, check=True).stdout
    pnm = subprocess.run(["xwdtopnm"], input=xwd, capture_output=True, check=True).stdout
    for terminal in terminals:
        terminal.kill()
        terminal.wait()
    return Image.open(io.BytesIO(pnm)).convert("RGB")


def save(klass, image, payloads, jpeg_quality=None):
    counters[klass] = counters.get(klass, 0) + 1
    os.makedirs(os.path.join(out, klass), exist_ok=True)
    name = "%s/%03d.%s" % (klass, counters[klass], "jpg" if jpeg_quality else "png")
    if jpeg_quality:
        image.save(os.path.join(out, name), "JPEG", quality=jpeg_quality)
    else:
        image.save(os.path.join(out, name), "PNG")
    expected[name] = payloads


def perspective(image):
    w, h = image.size
    d = int(min(w, h) * 0.12)
    # The screen seen by a phone held at an angle: a trapezoid, as make-qr-corpus.py makes it.
    src = [(0, 0), (w, 0), (w, h), (0, h)]
    dst = [(d, d // 2), (w - d, 0), (w, h), (0, h - d // 2)]
    rows = []
    for (x, y), (u, v) in zip(dst, src):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y, u])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y, v])
    for i in range(8):
        pivot = max(range(i, 8), key=lambda r: abs(rows[r][i]))
        rows[i], rows[pivot] = rows[pivot], rows[i]
        for r in range(8):
            if r != i:
                f = rows[r][i] / rows[i][i]
                rows[r] = [a - f * b for a, b in zip(rows[r], rows[i])]
    coeffs = [rows[i][8] / rows[i][i] for i in range(8)]
    return image.transform((w, h), Image.PERSPECTIVE, coeffs, Image.BICUBIC, fillcolor=(128, 128, 128))


def noise(image):
    gray = image.convert("L")
    pixels = gray.load()
    for _ in range(gray.width * gray.height // 12):
        x, y = rng.randrange(gray.width), rng.randrange(gray.height)
        pixels[x, y] = max(0, min(255, pixels[x, y] + rng.randint(-120, 120)))
    return gray


def jpeg30(image):
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=30)
    return Image.open(io.BytesIO(buffer.getvalue()))


if "--pair" in sys.argv:
    left, right = sys.argv[sys.argv.index("--pair") + 1:sys.argv.index("--pair") + 3]
    try:
        theme = THEMES[1][1] if "--dark" in sys.argv else THEMES[0][1]
        shot([left, right], FONTS[0][1], theme, False).save(out, "PNG")
    finally:
        display.kill()
        display.wait()
    sys.exit(0)

try:
    payloads = PAYLOADS[1:2] if small else PAYLOADS
    singles = []
    for kind, payload in payloads:
        for font_name, font in FONTS:
            for theme_name, theme in THEMES:
                for no_color in (False, True):
                    klass = "%s%s" % (theme_name, "-no-color" if no_color else "")
                    image = shot([payload], font, theme, no_color)
                    save(klass, image, [payload])
                    singles.append((image, payload))
    # Two windows: the offline flow's offer and reply side by side, and the code beside a backup.
    pairs = [(PAYLOADS[1][1], PAYLOADS[2][1])] if small else [(PAYLOADS[1][1], PAYLOADS[2][1]), (PAYLOADS[0][1], PAYLOADS[3][1])]
    for pair in pairs:
        # At 14 points a reply's code is taller than the screen beside another window: 10 points only.
        for font_name, font in FONTS[:1]:
            for theme_name, theme in THEMES:
                for no_color in (False, True):
                    save("two-windows", shot(list(pair), font, theme, no_color), list(pair))
    # Photo-like variants of the one-window shots.
    for image, payload in singles[:: 4 if small else 1]:
        save("photo-perspective", perspective(image), [payload])
        save("photo-blur", image.filter(ImageFilter.GaussianBlur(1.2)), [payload])
        save("photo-jpeg30", image, [payload], jpeg_quality=30)
        save("photo-noise", noise(image), [payload])
        save("photo-downscale", image.resize((image.width // 2, image.height // 2), Image.LANCZOS), [payload])
        save("photo-negate", ImageOps.invert(image), [payload])
        save("photo-all", jpeg30(perspective(ImageOps.invert(image)).filter(ImageFilter.GaussianBlur(1.2))), [payload], jpeg_quality=30)
finally:
    display.kill()
    display.wait()

with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1)
print("%d screenshots in %d classes" % (len(expected), len(set(k.split("/")[0] for k in expected))), file=sys.stderr)
