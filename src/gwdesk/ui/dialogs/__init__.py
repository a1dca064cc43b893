"""dialogs of the console."""
