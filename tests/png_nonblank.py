#!/usr/bin/env python3
"""png_nonblank.py PNG — exits 0 when the screenshot shows a rendered page, 1 when it is blank.

Decodes the PNG with the standard library only (8-bit RGB or RGBA, not interlaced: what
Chromium writes) and asks for enough non-background pixels and enough distinct colours that a
page with text, tables and charts has been drawn, not a white or error-coloured sheet."""
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})")
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw, stride, prev, rows = zlib.decompress(idat), width * bpp, bytearray(width * bpp), []
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def main():
    width, height, bpp, rows = pixels(sys.argv[1])
    counts = {}
    for row in rows:
        for x in range(0, width * bpp, bpp * 2):  # every other pixel is plenty
            px = row[x:x + 3]
            counts[px] = counts.get(px, 0) + 1
    total = sum(counts.values())
    background = max(counts.values())
    ink = 1 - background / total
    print(f"png_nonblank: {width}x{height}, {len(counts)} colours, {ink:.1%} of the page drawn on")
    return 0 if len(counts) >= 16 and ink >= 0.02 else 1


if __name__ == "__main__":
    sys.exit(main())
