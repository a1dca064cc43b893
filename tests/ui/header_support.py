"""What table-header tests share: reading the sort arrow a header actually paints."""

from __future__ import annotations

from PySide6.QtWidgets import QHeaderView


def drawn_arrow(header: QHeaderView, section: int) -> str:
    """The arrow actually painted in `section`: its dark pixels widen downwards for ▲."""
    image = header.grab().toImage()
    left = header.sectionViewportPosition(section)
    right = left + header.sectionSize(section)
    # The arrow sits at the section's right end, clear of the (centred) title.
    start = right - 24
    widths = []
    for y in range(image.height()):
        dark = sum(1 for x in range(start, right - 1) if image.pixelColor(x, y).lightness() < 140)
        if dark:
            widths.append(dark)
    assert len(widths) >= 2, "no sort arrow was drawn"
    return "▲" if widths[-1] > widths[0] else "▼"
