"""Scripts that measure gwdesk on this machine and print each figure beside a naive baseline.

Run one with `python -m benchmarks.<name>` from the repository root; each prints
human-readable lines and, as its last line, one JSON object with the figures.
"""
