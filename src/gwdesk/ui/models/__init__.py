"""models of the console."""
