"""Reading recipient lists from files and pasted text, without Qt.

The console's Batch tab, the CLI and the benchmarks share this: decoding a file
of unknown encoding, finding its delimiter, header and phone-number column,
normalising and deduplicating the numbers at import speed, listing what is
unusable with its row and reason, and exporting that list safely.
"""
