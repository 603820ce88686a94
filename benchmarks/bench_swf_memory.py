"""Peak memory of reading hostile SWF files under the default limits (traces/core/swf_limits.py).

    python benchmarks/bench_swf_memory.py [--jobs 2000000]

Each case runs in a fresh process and reports its peak resident memory (``ru_maxrss``):
a gzip bomb (a few MB of gzip that expands past the decompressed-byte limit), a file at the
job limit (fast path), the same with one malformed line read leniently (the line-by-line
path), one line of a million fields, and a 10 MB header comment.
"""

from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import ROOT, table

READ = """
import resource, sys, time
from traces.core.swf import read_swf
started = time.perf_counter()
try:
    trace = read_swf(sys.argv[1], strict=sys.argv[2] == "strict")
    outcome = f"read {len(trace.jobs)} jobs"
except ValueError as exc:
    outcome = str(exc).split(": ", 1)[-1][:70]
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{peak:.0f}\\t{time.perf_counter() - started:.1f}\\t{outcome}")
"""
BASE = """
import resource
import traces.core.swf
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def job_lines(n: int, start: int = 1) -> str:
    return "".join(
        f"{k} {k * 3} {k % 500} {60 + k % 3600} {1 + k % 64} -1 -1 {1 + k % 64} 7200 -1 1 "
        f"{k % 300} 1 -1 1 -1 -1 -1\n"
        for k in range(start, start + n)
    )


def write_cases(folder: Path, n_jobs: int) -> dict[str, tuple[Path, str]]:
    at_limit = folder / "at_limit.swf"
    with at_limit.open("w") as out:
        out.write("; Version: 2.2\n")
        for start in range(1, n_jobs + 1, 100_000):
            out.write(job_lines(min(100_000, n_jobs - start + 1), start))
    bad = folder / "one_bad_line.swf"
    text = at_limit.read_bytes()
    bad.write_bytes(text[: text.rindex(b"\n", 0, len(text) - 1) + 1] + b"1 2 3\n")
    bomb = folder / "bomb.swf.gz"
    with gzip.open(bomb, "wt", compresslevel=9) as out:
        out.write("; Version: 2.2\n")
        line = job_lines(1)
        for _ in range(12):  # ~1.2 GB of text: past the 1 GB decompressed limit
            out.write(line * 1_000_000)
    wide = folder / "wide.swf"
    wide.write_text("; Version: 2.2\n" + job_lines(10) + " ".join(["1"] * 1_000_000) + "\n")
    header = folder / "header.swf"
    header.write_text("; Note: " + "x" * 10_000_000 + "\n" + job_lines(10))
    return {
        f"{n_jobs:,} jobs (the job limit)": (at_limit, "strict"),
        f"{n_jobs - 1:,} jobs + 1 bad line, lenient": (bad, "lenient"),
        f"gzip bomb ({bomb.stat().st_size / 2**20:.1f} MB gzip)": (bomb, "strict"),
        "one line of 1,000,000 fields": (wide, "strict"),
        "10 MB header comment": (header, "strict"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2_000_000)
    args = parser.parse_args()
    base = subprocess.run(
        [sys.executable, "-c", BASE], cwd=ROOT, capture_output=True, text=True, check=True
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (path, mode) in write_cases(Path(tmp), args.jobs).items():
            done = subprocess.run(
                [sys.executable, "-c", READ, str(path), mode], cwd=ROOT,
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            peak, seconds, outcome = done.stdout.strip().split("\t")
            rows.append({"file": name, "peak RSS MB": peak, "s": seconds, "outcome": outcome})
    print(f"interpreter + numpy + pandas alone: {float(base.stdout):.0f} MB")
    print(table(rows, list(rows[0])))


if __name__ == "__main__":
    main()
