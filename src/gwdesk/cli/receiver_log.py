"""The receiver's log on stderr: lines for people (the default), or `--log-format json`.

In JSON every line is one object: `time` (UTC, ISO 8601), `level`, `event` (a short
name: `listening`, `backfill`, `health`, `stopped`, `note` for the rest, a library
logger's name for its lines), `message`, and the event's fields. Strings pass
`terminal_json`, as `--json` output does, so a customer's text cannot forge a line.

Neither form ever holds the ReplyPath's secret: the path is the first line of stdout
(the command's result, for whoever configures the gateway), never a log line.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Final, TextIO

from gwdesk.cli import Output
from gwdesk.domain.terminal import terminal_json

LOG_FORMATS: Final = ("text", "json")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class EventOutput(Output):
    """`Output` whose notes are events: `event()` names one (text form: its message)."""

    def event(self, event: str, message: str, level: str = "info", **fields: object) -> None:
        self.note(message)


class JsonEventOutput(EventOutput):
    """Notes and failures as JSON lines on stderr (results on stdout as before)."""

    def event(self, event: str, message: str, level: str = "info", **fields: object) -> None:
        record = {"time": _now(), "level": level, "event": event, "message": message, **fields}
        print(terminal_json(record), file=self.err, flush=True)

    def note(self, line: str) -> None:
        self.event("note", line)

    def failure(self, kind: str, message: str, **extra: object) -> None:
        self.event("failed", message, level="error", kind=kind, **extra)
        if self.json_mode:
            self.json_line({"ok": False, "error": {"type": kind, "message": message, **extra}})


class JsonLogFormatter(logging.Formatter):
    """A library's log record as one JSON line (its logger's name as the event)."""

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "event": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info and record.exc_info[0] is not None:
            fields["error"] = record.exc_info[0].__name__
        return terminal_json(fields)


def event_output(log_format: str, json_mode: bool, err: TextIO | None = None) -> EventOutput:
    """The receiver's `Output`; with "json", the process's log lines turn JSON too."""
    if log_format != "json":
        return EventOutput(json_mode, err=err)
    formatter = JsonLogFormatter()
    for handler in logging.getLogger().handlers:
        handler.setFormatter(formatter)
    return JsonEventOutput(json_mode, err=err)
