"""The SWF header: ``; Key: value`` comment lines, typed.

Header keys of the SWF definition (Version, Computer, Installation, Acknowledge,
Information, Conversion, MaxJobs, MaxRecords, Preemption, UnixStartTime,
TimeZone, TimeZoneString, StartTime, EndTime, MaxNodes, MaxProcs, MaxRuntime,
MaxMemory, AllowOveruse, MaxQueues, Queues, Queue, MaxPartitions, Partitions,
Partition, Note). A line with no key continues the previous key's value.
Numeric keys may be composite (``MaxProcs: 1664 (72, 1368, 224)``): the leading
integer is the value and the rest is kept in ``composite``.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

_KEY_LINE = re.compile(r"^;\s*([A-Za-z][A-Za-z0-9_]*)\s*:\s?(.*)$")
_LEADING_INT = re.compile(r"^\s*(-?\d+)")

INT_KEYS = {
    "MaxJobs": "max_jobs",
    "MaxRecords": "max_records",
    "UnixStartTime": "unix_start_time",
    "TimeZone": "time_zone",
    "MaxNodes": "max_nodes",
    "MaxProcs": "max_procs",
    "MaxRuntime": "max_runtime",
    "MaxMemory": "max_memory",
    "MaxQueues": "max_queues",
    "MaxPartitions": "max_partitions",
}
TEXT_KEYS = {
    "Version": "version",
    "Computer": "computer",
    "Installation": "installation",
    "Acknowledge": "acknowledge",
    "Information": "information",
    "Conversion": "conversion",
    "Preemption": "preemption",
    "TimeZoneString": "time_zone_string",
    "StartTime": "start_time",
    "EndTime": "end_time",
    "AllowOveruse": "allow_overuse",
}
LIST_KEYS = {
    "Queues": "queues",
    "Queue": "queues",
    "Partitions": "partitions",
    "Partition": "partitions",
    "Note": "notes",
}


@dataclass
class SwfHeader:
    """Typed view of the header; ``lines`` keeps the raw text for a faithful rewrite."""

    version: str | None = None
    computer: str | None = None
    installation: str | None = None
    acknowledge: str | None = None
    information: str | None = None
    conversion: str | None = None
    preemption: str | None = None
    time_zone_string: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    allow_overuse: str | None = None
    max_jobs: int | None = None
    max_records: int | None = None
    unix_start_time: int | None = None
    time_zone: int | None = None
    max_nodes: int | None = None
    max_procs: int | None = None
    max_runtime: int | None = None
    max_memory: int | None = None
    max_queues: int | None = None
    max_partitions: int | None = None
    queues: list[str] = field(default_factory=list)
    partitions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    composite: dict[str, str] = field(default_factory=dict)
    extra: dict[str, str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)

    @property
    def machine_procs(self) -> int | None:
        """MaxProcs, else MaxNodes (the synthetic Lublin logs give only MaxNodes)."""
        for value in (self.max_procs, self.max_nodes):
            if value is not None and value > 0:
                return value
        return None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["machine_procs"] = self.machine_procs
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SwfHeader:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def to_lines(self) -> list[str]:
        """Raw lines if the header was parsed; else lines built from the typed fields."""
        if self.lines:
            return list(self.lines)
        out = []
        for key, attr in {**TEXT_KEYS, **INT_KEYS}.items():
            value = getattr(self, attr)
            if value is not None:
                out.append(f"; {key}: {value}")
        for key, attr in (("Queues", "queues"), ("Partitions", "partitions"), ("Note", "notes")):
            out.extend(f"; {key}: {value}" for value in getattr(self, attr))
        return out


def parse_header(lines: list[str], oddities: dict[str, int] | None = None) -> SwfHeader:
    """Build a :class:`SwfHeader` from comment lines; counts header oddities."""
    header = SwfHeader(lines=list(lines))
    last_list: list[str] | None = None
    last_attr: str | None = None
    for line in lines:
        match = _KEY_LINE.match(line)
        if match is None:
            text = line.lstrip(";").strip()
            if text and last_list is not None and last_list:
                last_list[-1] = f"{last_list[-1]} {text}"
            elif text and last_attr is not None:
                setattr(header, last_attr, f"{getattr(header, last_attr) or ''} {text}".strip())
            continue
        key, value = match.group(1), match.group(2).strip()
        last_list, last_attr = None, None
        if key in INT_KEYS:
            _set_int(header, key, value)
        elif key in TEXT_KEYS:
            last_attr = TEXT_KEYS[key]
            setattr(header, last_attr, value)
        elif key in LIST_KEYS:
            last_list = getattr(header, LIST_KEYS[key])
            last_list.append(value)
        else:
            header.extra[key] = value
    _count_header_oddities(header, lines, oddities)
    return header


def _set_int(header: SwfHeader, key: str, value: str) -> None:
    match = _LEADING_INT.match(value)
    attr = INT_KEYS[key]
    if match is None:
        header.extra[key] = value
        return
    setattr(header, attr, int(match.group(1)))
    rest = value[match.end() :].strip()
    if rest:
        header.composite[key] = value


def _count_header_oddities(
    header: SwfHeader, lines: list[str], oddities: dict[str, int] | None
) -> None:
    if oddities is None:
        return
    if lines and header.version is None:
        oddities["header_without_version"] = 1
    if not lines:
        oddities["no_header"] = 1
    for key in header.composite:
        oddities[f"composite_{key}"] = 1
