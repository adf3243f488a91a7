#!/usr/bin/env python3
# Python: the images are drawn and degraded with Pillow, and the codes made by segno, a QR encoder
# independent of SealKit's.
"""Makes a corpus of QR code images for measuring decode rates (Scripts/bench), from fixed
seeds, into a folder (it is not committed: the images are large and this script makes them again).

  make-qr-corpus.py SEALKIT OUT     writes OUT/<class>/<n>.<png|jpg> and OUT/expected.json

Payloads are of every kind SealKit shows (key text, Rownd link#key, offer, reply, code URI, paper backup, share
bundle, share words), shaped like the real ones; encoders are the qrencode CLI, segno and SealKit itself
(`sealkit qr --format png`). Distortions with Pillow: module sizes 2 to 10 pixels, rotation up to 45 degrees,
perspective, blur, JPEG quality 20 to 90, noise, inversion, low contrast, and terminal screenshots of
`sealkit qr --format utf8` and `ansi` drawn with DejaVu Sans Mono.
"""
import base64
import io
import json
import os
import random
import subprocess
import sys

import segno
from PIL import Image, ImageDraw, ImageFilter, ImageFont, ImageOps

sealkit, out = sys.argv[1], sys.argv[2]
rng = random.Random(20261125)


def b64url(n):
    return base64.urlsafe_b64encode(bytes(rng.getrandbits(8) for _ in range(n))).decode().rstrip("=")


WORDS = ["academic", "acid", "acne", "acquire", "acrobat", "activity", "actress", "adapt", "adequate", "adjust"]
PAYLOADS = [
    ("key", base64.b64encode(bytes(rng.getrandbits(8) for _ in range(32))).decode()),
    ("rownd", "https://app.rownd.link/s/" + b64url(9) + "#" + base64.b64encode(bytes(rng.getrandbits(8) for _ in range(32))).decode()),
    ("offer", "sealkit-offer-v2:" + b64url(110)),
    ("reply", "sealkit-reply-v2:" + b64url(300)),
    ("uri", "sealkit-transfer:7-guitarist-revenge?version=0&rendezvous=ws%3A%2F%2Frelay.magic-wormhole.io%3A4000&role=leader"),
    ("backup", "sealkit-backup-v1:" + b64url(180)),
    ("bundle", "sealkit-shares-v1:" + b64url(160)),
    ("share", " ".join(rng.choice(WORDS) for _ in range(33))),
]


def encode(payload, encoder, scale):
    if encoder == "qrencode":
        png = subprocess.run(["qrencode", "-8", "-o", "-", "-t", "PNG", "-s", str(scale), "-m", "4"], input=payload.encode(),
                             capture_output=True, check=True).stdout
        return Image.open(io.BytesIO(png)).convert("L")
    if encoder == "segno":
        buffer = io.BytesIO()
        segno.make(payload, error="m", micro=False).save(buffer, kind="png", scale=scale, border=4)
        return Image.open(io.BytesIO(buffer.getvalue())).convert("L")
    png = subprocess.run([sealkit, "qr", "--format", "png"], input=payload.encode(), capture_output=True, check=True).stdout
    image = Image.open(io.BytesIO(png)).convert("L")
    # SealKit draws 8 pixels a module: scale to the size asked for.
    return image.resize((image.width * scale // 8, image.height * scale // 8), Image.NEAREST)


def pad(image, margin=40):
    canvas = Image.new("L", (image.width + 2 * margin, image.height + 2 * margin), 255)
    canvas.paste(image, (margin, margin))
    return canvas


def perspective(image):
    w, h = image.size
    d = int(min(w, h) * 0.18)
    # Map the square onto a trapezoid, as a phone held at an angle sees it.
    src = [(0, 0), (w, 0), (w, h), (0, h)]
    dst = [(d, d // 2), (w - d, 0), (w, h), (0, h - d // 2)]
    coeffs = find_coeffs(dst, src)
    return image.transform((w, h), Image.PERSPECTIVE, coeffs, Image.BICUBIC, fillcolor=255)


def find_coeffs(pa, pb):
    # Solve for the eight perspective coefficients (Pillow's convention) by Gaussian elimination.
    rows = []
    for (x, y), (u, v) in zip(pa, pb):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y, u])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y, v])
    n = 8
    for i in range(n):
        pivot = max(range(i, n), key=lambda r: abs(rows[r][i]))
        rows[i], rows[pivot] = rows[pivot], rows[i]
        for r in range(n):
            if r != i:
                f = rows[r][i] / rows[i][i]
                rows[r] = [a - f * b for a, b in zip(rows[r], rows[i])]
    return [rows[i][n] / rows[i][i] for i in range(n)]


def noise(image, amount=40):
    pixels = image.load()
    for _ in range(image.width * image.height // 12):
        x, y = rng.randrange(image.width), rng.randrange(image.height)
        pixels[x, y] = max(0, min(255, pixels[x, y] + rng.randint(-amount * 3, amount * 3)))
    return image


def terminal(payload, mode):
    text = subprocess.run([sealkit, "qr", "--format", mode], input=payload.encode(), capture_output=True, check=True).stdout.decode()
    text = text.replace("\x1b[", "\x00").split("\n")
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", 14)
    width = max(len(line) for line in text) * 9 + 20
    image = Image.new("L", (width, len(text) * 17 + 20), 255 if mode == "utf8" else 30)
    draw = ImageDraw.Draw(image)
    for row, line in enumerate(text):
        # ansi: strip the escape sequences (black on white is explicit there); draw the half blocks.
        clean = "".join(ch for ch in line if ch not in "\x00") if mode == "utf8" else strip_ansi(line)
        draw.text((10, 10 + row * 17), clean, fill=0 if mode == "utf8" else 230, font=font)
    return image if mode == "utf8" else ImageOps.invert(image)


def strip_ansi(line):
    out, skip = "", False
    for ch in line:
        if ch == "\x00":
            skip = True
            continue
        if skip:
            if ch == "m":
                skip = False
            continue
        out += ch
    return out


expected = {}


def save(klass, index, image, payload, jpeg_quality=None):
    folder = os.path.join(out, klass)
    os.makedirs(folder, exist_ok=True)
    name = os.path.join(klass, "%03d.%s" % (index, "jpg" if jpeg_quality else "png"))
    if jpeg_quality:
        image.save(os.path.join(out, name), "JPEG", quality=jpeg_quality)
    else:
        image.save(os.path.join(out, name), "PNG")
    expected[name] = payload


counters = {}
for kind, payload in PAYLOADS:
    for encoder in ("qrencode", "segno", "sealkit"):
        def n(klass):
            counters[klass] = counters.get(klass, 0) + 1
            return counters[klass]
        for scale in (2, 4, 10):
            save("clean", n("clean"), pad(encode(payload, encoder, scale)), payload)
        base = pad(encode(payload, encoder, 6))
        for angle in (15, 30, 45):
            save("rotation", n("rotation"), base.rotate(angle, resample=Image.BICUBIC, expand=True, fillcolor=255), payload)
        save("perspective", n("perspective"), perspective(pad(base, 60)), payload)
        save("blur", n("blur"), base.filter(ImageFilter.GaussianBlur(1.2)), payload)
        for quality in (20, 50, 90):
            save("jpeg", n("jpeg"), base, payload, jpeg_quality=quality)
        save("noise", n("noise"), noise(base.copy()), payload)
        save("inverted", n("inverted"), ImageOps.invert(base), payload)
        save("low-contrast", n("low-contrast"), base.point(lambda p: 110 + p * 50 // 255), payload)
    for mode in ("utf8", "ansi"):
        counters["terminal"] = counters.get("terminal", 0) + 1
        save("terminal", counters["terminal"], terminal(payload, mode), payload)

with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1, ensure_ascii=False)
print("%d images in %d classes" % (len(expected), len(set(k.split("/")[0] for k in expected))), file=sys.stderr)
