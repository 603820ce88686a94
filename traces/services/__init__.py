"""The traces app's glue between the SWF core, the database, the API and the commands."""

from traces.services.errors import (
    QuotaExceeded,
    TraceFormatError,
    TraceNameTaken,
    TraceTooLarge,
)
from traces.services.ingest import ingest_into, ingest_swf, parse_source
from traces.services.queries import (
    export_lines,
    filter_jobs,
    jobs_frame,
    resolve_trace,
    swf_trace_for,
)
from traces.services.uploads import (
    accept_upload,
    check_request_size,
    default_name,
    run_pending_ingest,
)

__all__ = [
    "QuotaExceeded",
    "TraceFormatError",
    "TraceNameTaken",
    "TraceTooLarge",
    "accept_upload",
    "check_request_size",
    "default_name",
    "export_lines",
    "filter_jobs",
    "ingest_into",
    "ingest_swf",
    "jobs_frame",
    "parse_source",
    "resolve_trace",
    "run_pending_ingest",
    "swf_trace_for",
]
