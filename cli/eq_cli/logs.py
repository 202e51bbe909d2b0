"""Logging for the long-running commands: readable text, or one JSON object per line."""

from __future__ import annotations

import json
import logging
from typing import Any

# Fields a log call may add with `extra=`, kept in the JSON lines.
_CONTEXT = ("group", "pod", "object")


class JSONFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update({k: getattr(record, k) for k in _CONTEXT if hasattr(record, k)})
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line)


def configure(level: str, style: str) -> None:
    handler = logging.StreamHandler()
    if style == "json":
        handler.setFormatter(JSONFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
