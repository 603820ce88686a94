"""A job its owner asks to start no earlier than a time (``begin``, or ``begin_in_s`` from
now; as ``sbatch --begin``): held in the site's hold queue until then and submitted as asked.

Queuecast decides no size and no hold for it. Its molding decides on the live queue at
arrival, which says nothing about the queue at ``begin``; and it is no hold-queue head: the
seed's followers (Section IV-B) queue behind the holds Queuecast makes, not behind a user's
own start time. A time already past submits the job now, through the usual decision.
"""

from __future__ import annotations

import datetime as dt
from typing import Any


def requested_begin(data: dict[str, Any], arrived: dt.datetime) -> dt.datetime | None:
    """The start time asked for, if it is after ``arrived``; None otherwise."""
    if data.get("begin") is not None:
        at = data["begin"]
    elif data.get("begin_in_s"):
        at = arrived + dt.timedelta(seconds=int(data["begin_in_s"]))
    else:
        return None
    return at if at > arrived else None


def begin_record(at: dt.datetime) -> dict[str, Any]:
    """The decision record of a job held at its owner's request."""
    return {
        "molding": None,
        "delay": None,
        "begin": {
            "at": at.isoformat(),
            "reason": "held at its owner's request until this time, then submitted as asked",
        },
    }
