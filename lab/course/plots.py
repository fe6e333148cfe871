"""PNG figures drawn with Pillow (no matplotlib): loss curves and attention heatmaps.

The training script writes these next to its results; they end up in docs/. Pillow comes with
Streamlit here and with matplotlib on the GPU machine, so no new dependency is needed.
"""

from __future__ import annotations

import math
from pathlib import Path

COLORS = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189)]


def _font(size: int = 13):
    """Pillow's bundled scalable font when available (Pillow >= 10.1), else its bitmap font."""
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except TypeError:
        return ImageFont.load_default()


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About n round tick values covering [lo, hi]."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.ceil(lo / step) * step
    return [start + i * step for i in range(int((hi - start) / step + 1e-9) + 1)]


def _fmt(v: float) -> str:
    """Short tick label: 1.2M, 350k, 4.5."""
    if abs(v) >= 1e6:
        return f"{v / 1e6:g}M"
    if abs(v) >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def line_chart(panels: list[tuple[str, dict]], path: str | Path, xlabel: str, ylabel: str,
               size: tuple[int, int] = (560, 380)) -> Path:
    """Panels side by side; each is (title, {label: (xs, ys)}) drawn as lines with a legend."""
    from PIL import Image, ImageDraw

    W, H = size
    left, right, top, bottom = 64, 16, 34, 48
    img = Image.new("RGB", (W * len(panels), H), "white")
    draw, font = ImageDraw.Draw(img), _font()
    for k, (title, series) in enumerate(panels):
        ox = k * W
        pts = [(x, y) for xs, ys in series.values() for x, y in zip(xs, ys, strict=True) if y is not None]
        if not pts:
            continue
        x0, x1 = 0.0, max(x for x, _ in pts) or 1.0
        y0, y1 = min(y for _, y in pts), max(y for _, y in pts)
        pad = (y1 - y0) * 0.05 or 0.5
        y0, y1 = y0 - pad, y1 + pad

        def px(x, y, ox=ox, x0=x0, x1=x1, y0=y0, y1=y1):
            return (ox + left + (x - x0) / (x1 - x0) * (W - left - right),
                    top + (y1 - y) / (y1 - y0) * (H - top - bottom))

        for t in nice_ticks(y0, y1):
            _, yy = px(x0, t)
            draw.line([(ox + left, yy), (ox + W - right, yy)], fill=(230, 230, 230))
            draw.text((ox + left - 6, yy), _fmt(t), fill="black", font=font, anchor="rm")
        for t in nice_ticks(x0, x1):
            xx, _ = px(t, y0)
            draw.line([(xx, top), (xx, H - bottom)], fill=(240, 240, 240))
            draw.text((xx, H - bottom + 4), _fmt(t), fill="black", font=font, anchor="mt")
        draw.rectangle([ox + left, top, ox + W - right, H - bottom], outline="black")
        for i, (label, (xs, ys)) in enumerate(series.items()):
            line = [px(x, y) for x, y in zip(xs, ys, strict=True) if y is not None]
            color = COLORS[i % len(COLORS)]
            if len(line) > 1:
                draw.line(line, fill=color, width=2)
            lx, ly = ox + W - right - 150, top + 8 + 16 * i
            draw.line([(lx, ly + 7), (lx + 18, ly + 7)], fill=color, width=3)
            draw.text((lx + 24, ly), label, fill="black", font=font)
        draw.text((ox + W / 2, 8), title, fill="black", font=_font(15), anchor="mt")
        draw.text((ox + (left + W - right) / 2, H - 18), xlabel, fill="black", font=font, anchor="mt")
        draw.text((ox + 6, top - 20), ylabel, fill="black", font=font)
    path = Path(path)
    img.save(path)
    return path


def heatmaps(panels: list[tuple[str, list[list[float]], list[str]]], path: str | Path,
             cell: int = 18) -> Path:
    """Attention heatmaps side by side; each is (title, square weights [query][key], token labels)."""
    from PIL import Image, ImageDraw

    font = _font(12)
    n = max(len(labels) for _, _, labels in panels)
    label_w = 96
    W, H = label_w + n * cell + 20, 40 + label_w + n * cell + 10
    img = Image.new("RGB", (W * len(panels), H), "white")
    draw = ImageDraw.Draw(img)
    for k, (title, weights, labels) in enumerate(panels):
        ox, oy = k * W + label_w, 40 + label_w
        draw.text((k * W + W / 2, 10), title, fill="black", font=_font(14), anchor="mt")
        for i, row in enumerate(weights):
            for j, v in enumerate(row):
                v = max(0.0, min(1.0, float(v)))
                color = tuple(int(255 - v * (255 - c)) for c in (8, 48, 107))
                draw.rectangle([ox + j * cell, oy + i * cell, ox + (j + 1) * cell - 1, oy + (i + 1) * cell - 1],
                               fill=color)
        for i, lab in enumerate(labels):
            draw.text((ox - 4, oy + i * cell + cell / 2), lab, fill="black", font=font, anchor="rm")
            tag = Image.new("RGBA", (label_w, cell), (255, 255, 255, 0))
            ImageDraw.Draw(tag).text((label_w - 4, cell / 2), lab, fill="black", font=font, anchor="rm")
            tag = tag.rotate(90, expand=True)
            img.paste(tag, (int(ox + i * cell), int(oy - label_w - 2)), tag)
        draw.rectangle([ox - 1, oy - 1, ox + len(labels) * cell, oy + len(labels) * cell], outline="black")
    path = Path(path)
    img.save(path)
    return path
