"""``import_sacct``: Slurm accounting into a site's history, in one transaction."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from django.db import transaction

from holdqueue.core.sacct import SacctFormatError, SacctReport, read_sacct
from holdqueue.models import Site, SiteHistory
from holdqueue.services.backends import site_seconds
from holdqueue.services.errors import BadJob, SiteNotFound


def site_named(name: str) -> Site:
    site = Site.objects.filter(name=name).first()
    if site is None:
        raise SiteNotFound(f"no site called {name!r} (create it with create_site)", field="site")
    return site


def import_sacct(
    path: Path, site: Site, *, lenient: bool = False, tz: dt.tzinfo = dt.UTC
) -> tuple[int, SacctReport]:
    """Add the file's finished jobs to the site's history; a job already there (same JobID)
    is kept as it was. Strict mode: the first bad row rejects the whole file."""
    try:
        with path.open(encoding="utf-8", errors="strict") as lines:
            frame, report = read_sacct(lines, lenient=lenient, tz=tz)
    except SacctFormatError as exc:
        raise BadJob(f"{path.name}: {exc}", line=exc.line, field=exc.column or None) from exc
    except UnicodeDecodeError as exc:
        raise BadJob(f"{path.name}: not UTF-8 text ({exc.reason})") from exc
    epoch = site.epoch.timestamp()
    with transaction.atomic():
        known = set(SiteHistory.objects.filter(site=site).values_list("job_key", flat=True))
        rows = [
            SiteHistory(
                site=site,
                job_key=r.job_key,
                user=r.user[:100],
                group=r.group[:100],
                partition=r.partition[:100],
                submit_s=r.submit_ts - epoch,
                wait_s=r.wait_s,
                run_s=r.run_s,
                procs=r.procs,
                req_time_s=r.req_time_s,
                status=r.status,
            )
            for r in frame.itertuples(index=False)
            if r.job_key not in known
        ]
        SiteHistory.objects.bulk_create(rows, batch_size=5000)
    return len(rows), report


__all__ = ["import_sacct", "site_named", "site_seconds"]
