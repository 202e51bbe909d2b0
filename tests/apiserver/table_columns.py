"""What every Table of the emulated API server is built of (tables.py renders them): the
`Column` with its column definition, the `Name` column, the cells of a row as a function of the
object and the time (`Cells`), and ages as kubectl prints them (duration.HumanDuration)."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]
Cells = Callable[[JSON, datetime.datetime], list[Any]]
"""A row's cells of an object, at a time (for the ages)."""
_NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)


@dataclass(frozen=True)
class Column:
    name: str
    type: str = "string"
    format: str = ""
    description: str = ""
    priority: int = 0
    path: tuple[Any, ...] = ()  # a CRD column's parsed jsonPath

    def definition(self) -> JSON:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


NAME = Column("Name", format="name", description=_NAME_DESCRIPTION)


def named(
    *names: str, wide: tuple[str, ...] = (), order: tuple[str, ...] = ()
) -> tuple[Column, ...]:
    """String columns; the `wide` ones at priority 1 (shown by `-o wide`), all in `order`."""
    columns = {n: Column(n) for n in names} | {n: Column(n, priority=1) for n in wide}
    return tuple(columns[n] for n in order or columns)


def age(timestamp: str | None, now: datetime.datetime) -> str:
    """translateTimestampSince: duration.HumanDuration of now - timestamp."""
    if not timestamp:
        return "<unknown>"
    try:
        then = datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return "<invalid>"
    return human_duration((now - then).total_seconds())


def human_duration(seconds: float) -> str:
    """apimachinery's duration.HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m" if s % 60 == 0 else f"{minutes}m{s % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = hours // 24 % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"
