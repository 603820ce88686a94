"""The summary table printed by ``import_swf`` and ``fetch_trace``."""

from __future__ import annotations

from traces.models import Trace


def summary_lines(trace: Trace, elapsed_s: float) -> list[str]:
    report = trace.ingest_report or {}
    oddities = report.get("oddities") or {}
    rows = [
        ("trace", f"{trace.name} (id {trace.pk})"),
        ("jobs", f"{trace.job_count:,}"),
        ("span, days", f"{trace.span_days:.1f}" if trace.span_days is not None else "-"),
        ("MaxProcs", _machine_size(trace)),
        ("utilisation", f"{trace.utilisation:.3f}" if trace.utilisation is not None else "-"),
        ("skipped lines", str(report.get("skipped_lines", 0))),
        ("oddities", ", ".join(f"{k} {v}" for k, v in oddities.items()) or "none"),
        ("time, s", f"{elapsed_s:.2f}"),
        ("rows/s", f"{trace.job_count / elapsed_s:,.0f}" if elapsed_s > 0 else "-"),
    ]
    width = max(len(key) for key, _ in rows)
    lines = [f"{key:<{width}}  {value}" for key, value in rows]
    lines += [f"warning: {w}" for w in report.get("warnings", [])]
    lines += [
        f"skipped line {s['line']}: {s['reason']}"
        + (f" (field {s['field']}, value {s['value']!r})" if s.get("field") else "")
        for s in report.get("skipped_examples", [])
    ]
    return lines


def _machine_size(trace: Trace) -> str:
    header = trace.header or {}
    if trace.machine_procs is None:
        return "-"
    if header.get("max_procs"):
        return str(trace.machine_procs)
    source = "MaxNodes" if header.get("max_nodes") else "largest job"
    return f"{trace.machine_procs} (from {source}; no MaxProcs in the header)"
