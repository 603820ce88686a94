"""Durations and instants as people read them: "2 h 10 min", "in 45 s", a trace's date.

The API keeps seconds (and ISO dates where a time is meant); pages show these forms.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

UNITS = (("y", 365 * 86400), ("d", 86400), ("h", 3600), ("min", 60), ("s", 1))
_PARSE_UNITS = {
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
}  # fmt: skip
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]+)")


def duration(seconds: float | None) -> str:
    """``7800`` -> ``"2 h 10 min"``: the two largest non-zero units, rounded to the smaller.

    Under a minute shows seconds (one decimal under 10 s); ``None`` or NaN shows an en dash.
    """
    seconds = as_number(seconds)
    if seconds is None:
        return "–"
    sign = "-" if seconds < 0 else ""
    if abs(seconds) < 9.95 and abs(seconds - round(seconds)) >= 0.05:
        return f"{sign}{abs(seconds):.1f} s"  # short runtimes: 1.8 s and 2.2 s stay apart
    left = math.floor(abs(float(seconds)) + 0.5)
    if left < 60:
        return f"{sign}{left} s"
    k = next(i for i, (_, size) in enumerate(UNITS) if left >= size)
    (major, size), (minor, small) = UNITS[k], UNITS[k + 1]
    total = math.floor(left / small + 0.5)  # in the smaller unit, rounded half up
    count, rest = divmod(total, size // small)
    return sign + (f"{count} {major} {rest} {minor}" if rest else f"{count} {major}")


def relative(seconds: float | None) -> str:
    """``7800`` -> ``"in 2 h 10 min"``, ``-60`` -> ``"1 min ago"``, ``0`` -> ``"now"``."""
    seconds = as_number(seconds)
    if seconds is None:
        return "–"
    if abs(seconds) < 0.5:
        return "now"
    return f"in {duration(seconds)}" if seconds > 0 else f"{duration(-seconds)} ago"


def parse_duration(text: str) -> float:
    """``"2h 30min"``, ``"1:30:00"``, ``"90 min"``, ``"45"`` (seconds) -> seconds.

    Raises ``ValueError`` naming the accepted forms.
    """
    raw = str(text).strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", raw):
        return float(raw)
    if re.fullmatch(r"\d+(:\d{1,2}){1,2}", raw):
        total = 0
        for piece in raw.split(":"):
            total = total * 60 + int(piece)
        return float(total * (60 if raw.count(":") == 1 else 1))
    parts = _PART.findall(raw)
    if parts and _PART.sub("", raw).strip() == "" and all(u in _PARSE_UNITS for _, u in parts):
        return float(sum(float(n) * _PARSE_UNITS[u] for n, u in parts))
    raise ValueError(
        f"{text!r} is not a duration: write seconds (3600), h:mm (1:30), h:mm:ss or '2h 30min'"
    )


def trace_datetime(header: dict | None, at_s: float | None) -> datetime | None:
    """The wall-clock instant of ``at_s`` seconds after a trace's start (header UnixStartTime).

    None when the trace does not say when it started.
    """
    start = (header or {}).get("unix_start_time")
    if start is None or at_s is None:
        return None
    return datetime.fromtimestamp(int(start), tz=UTC) + timedelta(seconds=float(at_s))


def percent(fraction: float | None, digits: int = 0) -> str:
    """``0.734`` -> ``"73%"``."""
    fraction = as_number(fraction)
    if fraction is None:
        return "–"
    return f"{100.0 * fraction:.{digits}f}%"


def as_number(value: object) -> float | None:
    """A finite float, or None for None, NaN, "" (a template's missing value) and text."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) or math.isinf(number) else number
