"""A file as an operator reads it: its extension, and its size in the 1024-byte units the
gateway's limits are stated in."""

from __future__ import annotations


def extension_of(name: str) -> str:
    """`photo.JPG` → `jpg`; '' for a name without a dot."""
    return name.rpartition(".")[2].lower() if "." in name else ""


def format_size(size: int) -> str:
    """`1 byte`, `900 bytes`, `381.2 KB`, `2.3 MB`."""
    if size < 1024:
        return f"{size} byte" if size == 1 else f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"
