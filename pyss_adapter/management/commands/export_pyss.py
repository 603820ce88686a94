"""Write an SWF that the real PySS replays the way we do (spec: "keep the door open to PySS").

python manage.py export_pyss (TRACE_NAME | --swf PATH) OUT.swf [--mode default|pyss]
    [--processors N]

Then run PySS (Python 2) on it and compare its per-job output with ours:

    python2 run_simulator.py --num-processors N --input-file OUT.swf \\
        --scheduler EasyBackfillScheduler --output-swf pyss_out.swf
    python manage.py replay --swf OUT.swf --mode pyss --processors N --output ours.csv

and ``pyss_adapter.core.pyss_io.compare_with_pyss`` (docs/simulator.md).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from pyss_adapter.core.jobs import MODES, sim_jobs
from pyss_adapter.core.pyss_io import write_pyss_swf
from pyss_adapter.services import ReplaySettings, machine_size
from queuecast.errors import QueuecastError
from queuecast.progress import progress_bar
from traces.services import resolve_trace


class Command(BaseCommand):
    help = "Export a trace as the converted SWF PySS reads with the same outcome."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("args", nargs="+", metavar="[TRACE_NAME] OUT.swf")
        parser.add_argument("--swf", help="an SWF file (.swf or .swf.gz) instead of a name")
        parser.add_argument("--mode", choices=list(MODES), default="pyss")
        parser.add_argument("--processors", type=int, help="machine size (default: header)")

    def handle(self, *args: str, **opts: Any) -> None:
        if len(args) not in (1, 2) or (len(args) == 2) == bool(opts["swf"]):
            raise CommandError("usage: export_pyss (TRACE_NAME | --swf PATH) OUT.swf")
        out = args[-1]
        try:
            settings = ReplaySettings(mode=opts["mode"], processors=opts["processors"])
            with progress_bar(f"export_pyss {out}") as bar:
                swf = resolve_trace(args[0] if len(args) == 2 else None, opts["swf"])
                bar(0.5)
                jobs = sim_jobs(swf.jobs, machine_size(swf, settings), settings.mode)
                count = write_pyss_swf(jobs, out, note=f"source {swf.name}")
        except (QueuecastError, ValueError) as exc:
            raise CommandError(getattr(exc, "detail", str(exc))) from exc
        overrun = int((jobs.runtime_s > jobs.estimate_s).sum())
        self.stdout.write(
            f"wrote {out}: {count} jobs, {jobs.machine_procs} processors ({settings.mode} mode); "
            f"run PySS with --num-processors {jobs.machine_procs}"
        )
        if overrun:
            self.stdout.write(f"warning: {overrun} jobs overrun their estimate; PySS cuts them")
