"""The arguments both evaluation commands share: which trace, which methods, which split."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser


def add_split_arguments(
    parser: CommandParser, default_methods: list[str] | tuple[str, ...]
) -> None:
    """``(TRACE_NAME | --swf PATH) [--methods M,..] [--tune-fraction F] [--limit N] [--json F]``."""
    parser.add_argument("trace_name", nargs="?", help="a stored trace")
    parser.add_argument("--swf", help="an SWF file (.swf or .swf.gz) instead")
    parser.add_argument("--methods", default=",".join(default_methods))
    parser.add_argument("--tune-fraction", type=float, default=0.2)
    parser.add_argument("--limit", type=int, default=None, help="N test jobs evenly spread")
    parser.add_argument("--json", help="write the per-method numbers here")
    parser.add_argument(
        "--jobs", type=int, default=1,
        help="worker processes answering the test jobs in chunks (same results as 1)",
    )  # fmt: skip


def check_split_options(opts: dict[str, Any]) -> None:
    """Reject a split the harness cannot use, naming the option."""
    if opts["limit"] is not None and opts["limit"] < 1:
        raise CommandError("--limit must be >= 1")
    if not 0.0 <= opts["tune_fraction"] < 1.0:
        raise CommandError("--tune-fraction must be in [0, 1)")
    if opts.get("jobs", 1) < 1:
        raise CommandError("--jobs must be >= 1")
