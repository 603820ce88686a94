"""Progress reporting shared by commands (a bar) and tasks (a database field).

Core functions accept ``progress: Callable[[float], None] | None`` and call it
with the fraction done; they never know who listens.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tqdm import tqdm

ProgressFn = Callable[[float], None]


@contextmanager
def progress_bar(description: str, *, disable: bool = False) -> Iterator[ProgressFn]:
    """A tqdm bar driven by fractions in [0, 1]; yields the callback."""
    bar = tqdm(
        total=1000,
        desc=description,
        unit="‰",
        file=sys.stderr,
        disable=disable,
        bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining}",
    )
    try:

        def update(fraction: float) -> None:
            target = int(max(0.0, min(1.0, fraction)) * 1000)
            if target > bar.n:
                bar.update(target - bar.n)

        yield update
        update(1.0)
    finally:
        bar.close()


def throttled(fn: ProgressFn, *, step: float = 0.01) -> ProgressFn:
    """Call ``fn`` only when the fraction moved by ``step`` (database writes are not free)."""
    last = [-1.0]

    def update(fraction: float) -> None:
        if fraction >= 1.0 or fraction - last[0] >= step:
            last[0] = fraction
            fn(fraction)

    return update
