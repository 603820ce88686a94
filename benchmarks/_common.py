"""Helpers shared by the benchmark scripts (run them from the project root)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def setup_django() -> None:
    """Django's settings and apps, for a script that reads the registries or the database."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "queuecast.settings")
    import django

    django.setup()


def traces_dir() -> Path:
    """The shared traces folder: QUEUECAST_TRACES_DIR, else ../shared/traces."""
    path = Path(os.environ.get("QUEUECAST_TRACES_DIR") or ROOT.parent / "shared" / "traces")
    if not path.is_dir():
        sys.exit(f"traces folder not found: {path} (set QUEUECAST_TRACES_DIR)")
    return path


def fitted_log(swf_file: str, method: str):  # -> (SwfResult, FittedBundle)
    """A file of the traces folder and the bundle the service fits on it (``fit_bundle`` with
    wait ``method``, runtime ``rangeset``; the first 20% of jobs is its tuning part), with
    the fit's CPU printed. Django must be set up (:func:`setup_django`)."""
    import time

    from predictor.core.bundle import fit_bundle
    from traces.services import resolve_trace

    swf = resolve_trace(None, str(traces_dir() / swf_file))
    t0 = time.process_time()
    bundle = fit_bundle(swf.jobs, int(swf.machine_procs or 1), wait_method=method,
                        runtime_method="rangeset")  # fmt: skip
    print(f"{swf_file}: {method} fitted in {time.process_time() - t0:.1f} CPU-s")
    return swf, bundle


def largest_trace() -> Path:
    return max(traces_dir().glob("*.swf*"), key=lambda p: p.stat().st_size)


def table(rows: list[dict], columns: list[str]) -> str:
    """A plain fixed-width table."""
    widths = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in columns}
    lines = ["  ".join(c.ljust(widths[c]) for c in columns)]
    lines.append("  ".join("-" * widths[c] for c in columns))
    lines += ["  ".join(str(r.get(c, "")).ljust(widths[c]) for c in columns) for r in rows]
    return "\n".join(lines)
