"""tabs of the console."""
