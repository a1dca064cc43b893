"""The Logs tab: the log cache's table, filters, detail, chart, sync and export."""
