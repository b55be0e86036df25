#!/usr/bin/env python3
"""Desktop smoke test: the native window draws the panels under a virtual X server.

    desktop_smoke.py ATTNLAB_DESKTOP OUT_DIR [--tour]

Runs attnlab-desktop under xvfb-run for a few frames, reads back its last frame, checks
that it is a picture (many colours, not one flat fill) and keeps it as OUT_DIR/desktop.png.
With --tour: a tour file plays (its caption card, cream-coloured, fills part of the window's
lower right, kept as OUT_DIR/desktop-tour.png), and a malformed one is refused before any window
opens, with exit status 2 and a message that names the step and the key.
Standard library only.
"""
import os
import struct
import subprocess
import sys
import zlib


def read_ppm(path):
    with open(path, "rb") as f:
        data = f.read()
    magic, size, maxval, pixels = data.split(b"\n", 3)
    if magic != b"P6" or maxval != b"255":
        raise ValueError(f"{path}: not an 8-bit binary PPM")
    w, h = map(int, size.split())
    if len(pixels) != w * h * 3:
        raise ValueError(f"{path}: {len(pixels)} bytes of pixels, expected {w * h * 3}")
    return w, h, pixels


def write_png(path, w, h, rgb):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + rgb[y * w * 3:(y + 1) * w * 3] for y in range(h))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def draw_frames(exe, args, out, name):
    """Runs attnlab-desktop with args under xvfb-run and keeps its last frame as OUT/name.png:
    (width, height, rgb), or None after printing why not."""
    ppm = os.path.join(out, name + ".ppm")
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", exe, *args, "--screenshot", ppm]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    print(run.stdout + run.stderr, end="")
    if run.returncode != 0:
        print(f"FAIL: attnlab-desktop {' '.join(args)} exited with {run.returncode}")
        return None
    w, h, rgb = read_ppm(ppm)
    write_png(os.path.join(out, name + ".png"), w, h, rgb)
    os.remove(ppm)
    return w, h, rgb


CARD = (255, 251, 235)  # the tour card's background (src/app/tour/tour_player.cpp), nearly opaque


def tour_main(exe, out):
    bad = os.path.join(out, "bad-tour.json")
    with open(bad, "w") as f:
        f.write('{"v":1,"kind":"attnlab-tour","steps":[{"title":"x","view":{"panel":"text"}},{"view":{"head":"two"}}]}')
    run = subprocess.run([exe, "--tour", bad], capture_output=True, text=True, timeout=60)
    if run.returncode != 2 or "step 2's view: head must be" not in run.stderr:
        print(f"FAIL: a malformed tour gave exit {run.returncode}: {run.stderr.strip()}")
        return 1
    print(f"malformed tour refused: {run.stderr.strip()}")
    good = os.path.join(out, "tour.json")
    with open(good, "w") as f:
        f.write('{"v":1,"kind":"attnlab-tour","title":"Desktop tour","steps":['
                '{"title":"One","caption":"T is {gradient.T}.","view":{"panel":"gradient","T":0.5}},'
                '{"title":"Two","caption":"","view":{"panel":"playground"}}]}')
    frame = draw_frames(exe, ["--no-model", "--tour", good, "--frames", "8"], out, "desktop-tour")
    if not frame:
        return 1
    w, h, rgb = frame
    def card(x, y):
        i = (y * w + x) * 3
        return all(abs(rgb[i + c] - CARD[c]) <= 3 for c in range(3))
    lower_right = sum(card(x, y) for y in range(h // 2, h, 4) for x in range(w // 2, w, 4))
    upper_left = sum(card(x, y) for y in range(0, h // 2, 4) for x in range(0, w // 2, 4))
    share = lower_right / ((h // 2 // 4) * (w // 2 // 4))
    print(f"tour card: {share:.1%} of the lower right quarter, {upper_left} samples in the upper left; kept {out}/desktop-tour.png")
    if share < 0.05 or upper_left > 0:
        print("FAIL: no tour card in the lower right (or its colour elsewhere)")
        return 1
    return 0


def main():
    exe, out = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3 and sys.argv[3] == "--tour":
        os.makedirs(out, exist_ok=True)
        return tour_main(exe, out)
    os.makedirs(out, exist_ok=True)
    frame = draw_frames(exe, ["--frames", "6"], out, "desktop")
    if not frame:
        return 1
    w, h, rgb = frame
    colours = {rgb[i:i + 3] for i in range(0, len(rgb), 3 * 7)}
    counts = {}
    for i in range(0, len(rgb), 3 * 7):
        counts[rgb[i:i + 3]] = counts.get(rgb[i:i + 3], 0) + 1
    inked = 1 - max(counts.values()) / sum(counts.values())
    print(f"{w}x{h}, {len(colours)} colours, {inked:.1%} of pixels off the background; kept {out}/desktop.png")
    if (w, h) != (1280, 800) or len(colours) < 50 or inked < 0.05:
        print("FAIL: the desktop window looks blank")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
