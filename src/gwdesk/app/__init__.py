"""The application core: every use case the console and the command line share (Qt-free)."""
