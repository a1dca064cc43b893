"""widgets of the console."""
