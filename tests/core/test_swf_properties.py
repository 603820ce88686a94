"""Properties of the SWF reader (hypothesis): round trip, field count and range rejections."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from traces.core.swf import (
    FLOAT_FIELDS,
    INT_FIELDS,
    SWF_FIELDS,
    SwfFormatError,
    format_jobs,
    read_swf,
)
from traces.core.swf_limits import FIELD_RANGES, is_unlimited

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SECONDS = st.integers(-1, 10**7)


def job_rows(n: int) -> st.SearchStrategy[pd.DataFrame]:
    """``n`` valid jobs: distinct numbers, ints in range, times with up to 2 decimals."""
    ints = {
        name: st.lists(st.integers(-1, 2**31 - 1), min_size=n, max_size=n)
        for name in INT_FIELDS
        if name != "job_id"
    }
    floats = {
        name: st.lists(
            st.one_of(SECONDS, st.decimals(0, 10**6, places=2).map(float)), min_size=n, max_size=n
        )
        for name in FLOAT_FIELDS
    }
    ids = st.lists(st.integers(1, 2**53 - 1), min_size=n, max_size=n, unique=True)
    return st.fixed_dictionaries({"job_id": ids, **ints, **floats}).map(
        lambda cols: pd.DataFrame({name: cols[name] for name in SWF_FIELDS})
    )


def text_of(frame: pd.DataFrame) -> io.BytesIO:
    return io.BytesIO(("; Version: 2.2\n" + format_jobs(frame)).encode())


@PROPERTY
@given(st.integers(1, 30).flatmap(job_rows))
def test_write_then_read_gives_the_same_jobs(frame: pd.DataFrame) -> None:
    frame["submit_time"] = np.sort(frame["submit_time"].to_numpy())  # reading sorts by submit
    jobs = read_swf(text_of(frame)).jobs
    for name in SWF_FIELDS:
        np.testing.assert_array_equal(jobs[name].to_numpy(np.float64), frame[name].to_numpy(float))


@PROPERTY
@given(
    st.integers(2, 20).flatmap(job_rows),
    st.integers(1, 40).filter(lambda k: k != 18),
    st.data(),
)
def test_a_line_with_other_than_18_fields_is_rejected_naming_its_line(frame, n_fields, data):
    lines = format_jobs(frame).splitlines()
    at = data.draw(st.integers(0, len(lines) - 1))
    lines[at] = " ".join((lines[at].split() * 3)[:n_fields])
    body = io.BytesIO(("\n".join(lines) + "\n").encode())
    try:
        read_swf(body)
    except SwfFormatError as exc:
        assert exc.line == at + 1 and f"found {n_fields}" in exc.reason
    else:
        raise AssertionError(f"a line with {n_fields} fields was accepted")
    body.seek(0)
    lenient = read_swf(body, strict=False) if len(lines) > 1 else None
    if lenient is not None:
        assert lenient.report.skipped_lines == 1 and len(lenient.jobs) == len(lines) - 1


@PROPERTY
@given(
    st.integers(1, 10).flatmap(job_rows),
    st.sampled_from([f for f in SWF_FIELDS if f != "job_id"]),
    st.booleans(),
    st.data(),
)
def test_a_value_outside_its_fields_range_is_rejected(frame, field, above, data) -> None:
    low, high = FIELD_RANGES[field]
    bad = data.draw(
        (st.integers(int(high) + 1, 2**70) if above else st.integers(-(2**70), int(low) - 1))
        # The archive's "unlimited" (2^31-1, 2^32-1) is stored as unknown, not refused.
        .filter(lambda v: not is_unlimited(field, v))
    )
    lines = format_jobs(frame).splitlines()
    at = data.draw(st.integers(0, len(lines) - 1))
    tokens = lines[at].split()
    tokens[SWF_FIELDS.index(field)] = str(bad)
    lines[at] = " ".join(tokens)
    try:
        read_swf(io.BytesIO(("\n".join(lines) + "\n").encode()))
    except SwfFormatError as exc:
        assert (exc.line, exc.field) == (at + 1, field) and "out of range" in exc.reason
    else:
        raise AssertionError(f"{field}={bad} was accepted")
