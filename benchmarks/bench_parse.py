"""SWF parse rate: lines per second on the largest shared trace and on 1 M lines.

    python benchmarks/bench_parse.py [--repeat 3]

The 1 M-line file is the largest trace repeated with renumbered jobs (written to
a temporary directory, never kept).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _common import largest_trace, table

from traces.core.swf import SwfTrace, read_swf, write_swf


def best_of(path: Path, repeat: int) -> tuple[float, int]:
    best, lines = float("inf"), 0
    for _ in range(repeat):
        start = time.perf_counter()
        trace = read_swf(path)
        best = min(best, time.perf_counter() - start)
        lines = trace.report.lines
    return best, lines


def million_line_file(trace: SwfTrace, folder: Path) -> Path:
    import pandas as pd

    copies, parts, offset = -(-1_000_000 // len(trace.jobs)), [], 0
    span = float(trace.jobs["submit_time"].max()) + 1
    for i in range(copies):
        part = trace.jobs.copy()
        part["job_id"] += offset
        part["submit_time"] = part["submit_time"].where(
            part["submit_time"] < 0, part["submit_time"] + i * span
        )
        offset += int(trace.jobs["job_id"].max())
        parts.append(part)
    big = SwfTrace(header=trace.header, jobs=pd.concat(parts, ignore_index=True).iloc[:1_000_000])
    out = folder / "million.swf.gz"
    write_swf(big, out)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    path = largest_trace()
    rows = []
    seconds, lines = best_of(path, args.repeat)
    rows.append(
        {
            "file": path.name,
            "lines": lines,
            "seconds": f"{seconds:.3f}",
            "lines/s": f"{lines / seconds:,.0f}",
        }
    )
    with tempfile.TemporaryDirectory() as tmp:
        big = million_line_file(read_swf(path), Path(tmp))
        seconds, lines = best_of(big, args.repeat)
        rows.append(
            {
                "file": "1M lines (largest trace repeated, gzip)",
                "lines": lines,
                "seconds": f"{seconds:.3f}",
                "lines/s": f"{lines / seconds:,.0f}",
            }
        )
    print(f"SWF parse rate, best of {args.repeat}")
    print(table(rows, ["file", "lines", "seconds", "lines/s"]))


if __name__ == "__main__":
    main()
