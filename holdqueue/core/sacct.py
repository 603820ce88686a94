"""Reading Slurm accounting (``sacct --parsable2 --allusers``) into a site's history.

The input is what this command prints (one header line naming the columns, then ``|``
separated rows; ``--parsable2`` has no trailing ``|``)::

    sacct --parsable2 --allusers -X --starttime 2024-01-01 \\
          --format JobID,User,Group,Partition,Submit,Start,End,State,AllocCPUS,Timelimit

Columns used (case as sacct prints them; order free; others ignored):

| column | required | becomes |
|---|---|---|
| JobID | yes | the history row's key (``1234``; array/het ids such as ``1234_7`` kept as text) |
| User | yes | the user (SWF field 12 after numbering) |
| Submit, Start, End | yes | submit time, wait = Start - Submit, runtime = End - Start |
| State | yes | ``COMPLETED`` -> status 1, ``CANCELLED*`` -> 5, other ends -> 0 |
| AllocCPUS (else NCPUS, else ReqCPUS) | yes | processors |
| Timelimit | yes | requested time (``[D-]HH:MM:SS``, ``MM:SS``; unlimited -> unknown) |
| Group, Partition | no | kept as text |

Rows of job steps (``1234.batch``, ``1234.0``) are skipped (``-X`` omits them). Jobs that
never started (``Start`` is ``None``/``Unknown``) or have not ended are counted, not errors.
Times are the ``sacct`` machine's local clock; the caller says which zone that is.

Errors follow the SWF reader's rules: strict mode stops at the first bad row naming the
line, the column and the value; lenient mode skips bad rows and reports each.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

REQUIRED = ("JobID", "User", "Submit", "Start", "End", "State", "Timelimit")
CPU_COLUMNS = ("AllocCPUS", "NCPUS", "ReqCPUS")
NOT_A_TIME = {"", "None", "Unknown"}
_LIMIT = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$")


class SacctFormatError(ValueError):
    """A row of sacct output that cannot be used; names line, column and value."""

    def __init__(self, message: str, *, line: int, column: str = "", value: str = "") -> None:
        self.line, self.column, self.value = line, column, value
        where = f"line {line}" + (f", column {column}" if column else "")
        super().__init__(f"{where}: {message}" + (f" ({value!r})" if value else ""))


@dataclass
class SacctReport:
    lines: int = 0
    jobs: int = 0
    steps_skipped: int = 0
    never_ran: int = 0
    skipped: list[str] = field(default_factory=list)


def parse_time_limit(text: str) -> float:
    """Slurm's ``Timelimit`` in seconds (-1 when unlimited or the partition's)."""
    if text in ("UNLIMITED", "Partition_Limit", "INVALID", ""):
        return -1.0
    m = _LIMIT.match(text)
    if m is None:
        raise ValueError("not a [D-]HH:MM:SS time limit")
    days, hours, minutes, seconds = (int(g) if g else 0 for g in m.groups())
    if m.group(2) is None:  # "MM:SS"
        hours = 0
    return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)


def _time(text: str, tz: dt.tzinfo) -> float | None:
    if text in NOT_A_TIME:
        return None
    return dt.datetime.fromisoformat(text).replace(tzinfo=tz).timestamp()


def _header(line: str) -> dict[str, int]:
    names = line.rstrip("\n").split("|")
    index = {n: k for k, n in enumerate(names)}
    missing = [c for c in REQUIRED if c not in index]
    if missing or not any(c in index for c in CPU_COLUMNS):
        need = [*missing] + ([] if any(c in index for c in CPU_COLUMNS) else ["AllocCPUS"])
        raise SacctFormatError(f"the header lacks {', '.join(need)}", line=1, value=line[:200])
    return index


def _row(cells: list[str], index: dict[str, int], n: int, tz: dt.tzinfo) -> dict | None:
    def cell(name: str) -> str:
        return cells[index[name]].strip()

    cpu_col = next(c for c in CPU_COLUMNS if c in index)
    values: dict = {"job_key": cell("JobID"), "user": cell("User")}
    for name in ("Submit", "Start", "End"):
        try:
            values[name] = _time(cell(name), tz)
        except ValueError:
            raise SacctFormatError(
                "not an ISO time", line=n, column=name, value=cell(name)
            ) from None
    try:
        values["procs"] = int(cell(cpu_col))
        values["req_time_s"] = parse_time_limit(cell("Timelimit"))
    except ValueError as exc:
        column = cpu_col if "procs" not in values else "Timelimit"
        raise SacctFormatError(str(exc), line=n, column=column, value=cell(column)) from None
    if values["Submit"] is None:
        raise SacctFormatError("no submit time", line=n, column="Submit", value=cell("Submit"))
    if values["Start"] is None or values["End"] is None:
        return None
    state = cell("State").split(" ")[0]
    values["status"] = 1 if state == "COMPLETED" else 5 if state.startswith("CANCELLED") else 0
    values["group"] = cell("Group") if "Group" in index else ""
    values["partition"] = cell("Partition") if "Partition" in index else ""
    return values


def read_sacct(
    lines: Iterable[str], *, lenient: bool = False, tz: dt.tzinfo = dt.UTC
) -> tuple[pd.DataFrame, SacctReport]:
    """Finished jobs of ``sacct --parsable2`` output, sorted by submit time.

    Returns a frame with ``job_key, user, group, partition, submit_ts, wait_s, run_s, procs,
    req_time_s, status`` (Unix seconds and durations in seconds) and a report.
    """
    it = iter(lines)
    report = SacctReport()
    first = next(it, None)
    if first is None:
        raise SacctFormatError("empty input: expected sacct's header line", line=1)
    index = _header(first)
    rows = []
    for n, raw in enumerate(it, start=2):
        report.lines += 1
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        cells = line.split("|")
        try:
            if len(cells) != len(index):
                raise SacctFormatError(f"{len(cells)} columns, the header has {len(index)}", line=n)
            if "." in cells[index["JobID"]]:
                report.steps_skipped += 1
                continue
            row = _row(cells, index, n, tz)
        except SacctFormatError as exc:
            if not lenient:
                raise
            report.skipped.append(str(exc))
            continue
        if row is None:
            report.never_ran += 1
            continue
        rows.append(row)
    report.jobs = len(rows)
    frame = pd.DataFrame(
        rows,
        columns=[
            "job_key",
            "user",
            "group",
            "partition",
            "Submit",
            "Start",
            "End",
            "procs",
            "req_time_s",
            "status",
        ],
    )
    out = pd.DataFrame(
        {
            "job_key": frame["job_key"].astype(str),
            "user": frame["user"].astype(str),
            "group": frame["group"].astype(str),
            "partition": frame["partition"].astype(str),
            "submit_ts": frame["Submit"].astype(float),
            "wait_s": (frame["Start"] - frame["Submit"]).clip(lower=0).astype(float),
            "run_s": (frame["End"] - frame["Start"]).clip(lower=0).astype(float),
            "procs": frame["procs"].astype(int),
            "req_time_s": frame["req_time_s"].astype(float),
            "status": frame["status"].astype(int),
        }
    )
    return out.sort_values("submit_ts", kind="stable").reset_index(drop=True), report
