"""Replay a trace under baseline, molding and molding + delay (seed Tables VIII and IX).

python manage.py evaluate_molding (TRACE_NAME | --swf PATH)
    [--strategies baseline,molding,delay] [--runtime-model downey|paper] [--sigma 1.0]
    [--seed 0] [--tune-fraction 0.2] [--guard auto|0..1] [--work-limit 1]
    [--wait-method auto|sim|...] [--runtime-method choose|rangeset|...] [--json FILE]
    [--plots DIR]
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from jobmolding import services
from jobmolding.core.policy import STRATEGIES
from jobmolding.plots import PLOTS, plot_png
from queuecast.errors import QueuecastError
from queuecast.migrated import require_migrated
from queuecast.progress import progress_bar
from traces.models import Trace
from traces.services import resolve_trace

ARGUMENT_OF = {
    "strategies": "--strategies",
    "runtime_model": "--runtime-model",
    "tune_fraction": "--tune-fraction",
    "sigma": "--sigma",
    "guard": "--guard",
    "work_limit": "--work-limit",
    "wait_method": "--wait-method",
    "runtime_method": "--runtime-method",
    "trace": "TRACE_NAME/--swf",
}


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (temporary file, then rename)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it private; a result is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Command(BaseCommand):
    help = "Replay a trace with job molding and delayed submission against the baseline."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("trace_name", nargs="?", help="a stored trace")
        parser.add_argument("--swf", help="an SWF file (.swf or .swf.gz) instead")
        parser.add_argument("--strategies", default=",".join(STRATEGIES))
        parser.add_argument(
            "--runtime-model",
            default="downey",
            help="downey (work-conserving, as the live sites decide) or paper (the seed's)",
        )
        parser.add_argument("--sigma", type=float, default=1.0, help="Downey's sigma")
        parser.add_argument("--seed", type=int, default=0, help="roulette-wheel seed")
        parser.add_argument("--tune-fraction", type=float, default=0.2)
        parser.add_argument(
            "--guard",
            default="auto",
            help="act only on predicted gains above this share (0-1), or auto: chosen on the "
            "tuning part (default); 0 is the seed's rule",
        )
        parser.add_argument(
            "--work-limit",
            type=float,
            default=1.0,
            help="the most CPU work a molded size may do, as a multiple of the original's "
            "(downey; 1: never more, the default; inf: the seed's rule)",
        )
        parser.add_argument(
            "--wait-method",
            help="registry wait method; default: the live service's (auto). sim (the "
            "queue-based start) costs about a tenth of the CPU but proves the decision code, "
            "not the live answers (docs/molding.md)",
        )
        parser.add_argument(
            "--runtime-method",
            help="registry runtime method, or choose (chosen on the tuning part, calibrated); "
            "default: the live service's (choose)",
        )
        parser.add_argument("--json", help="write the figures here")
        parser.add_argument("--plots", help="write PNG plots into this folder")

    def handle(self, *args: Any, **opts: Any) -> None:
        require_migrated("evaluate_molding")  # it stores the run at its end
        settings = self._settings(opts)
        for option in ("json", "plots"):
            self._check_target(option, opts[option])
        swf = resolve_trace(opts["trace_name"], opts["swf"])
        try:
            with progress_bar(f"evaluate_molding {swf.name or opts['swf']}") as bar:
                result = services.evaluate_swf(swf, settings, bar)
        except QueuecastError as exc:
            raise CommandError(self._named(exc)) from exc
        trace = (
            Trace.objects.filter(name=opts["trace_name"]).first() if opts["trace_name"] else None
        )
        self._write_outputs(result, opts)
        run = services.store_finished(settings, result, trace, opts["swf"] or "")
        self._table(result)
        self.stdout.write(f"stored as molding run {run.pk}")

    def _settings(self, opts: dict[str, Any]) -> services.MoldingSettings:
        try:
            return services.MoldingSettings(
                strategies=opts["strategies"],
                runtime_model=opts["runtime_model"],
                seed=opts["seed"],
                tune_fraction=opts["tune_fraction"],
                sigma=opts["sigma"],
                guard=self._guard(opts["guard"]),
                work_limit=opts["work_limit"],
                **{k: opts[k] for k in ("wait_method", "runtime_method") if opts[k] is not None},
            )
        except QueuecastError as exc:
            raise CommandError(self._named(exc)) from exc

    @staticmethod
    def _guard(text: str) -> float | None:
        if text == "auto":
            return None
        try:
            return float(text)
        except ValueError as exc:
            raise CommandError(f"--guard: a number in [0, 1] or auto; got {text!r}") from exc

    @staticmethod
    def _named(exc: QueuecastError) -> str:
        field = exc.context.get("field")
        return f"{ARGUMENT_OF.get(field, field)}: {exc.detail}" if field else exc.detail

    @staticmethod
    def _check_target(option: str, value: str | None) -> None:
        if not value:
            return
        path = Path(value)
        folder = path if option == "plots" else path.parent
        if option == "plots" and path.exists() and not path.is_dir():
            raise CommandError(f"--plots {value}: not a folder")
        if option == "json" and not (folder.is_dir() or folder == Path("")):
            raise CommandError(f"--json {value}: no folder {folder}")

    def _write_outputs(self, result: dict[str, Any], opts: dict[str, Any]) -> None:
        """Plots and JSON, each file whole (a Ctrl-C leaves no half-written file)."""
        if opts["plots"]:
            folder = Path(opts["plots"])
            folder.mkdir(parents=True, exist_ok=True)
            for name in PLOTS:
                write_atomic(folder / f"{name}.png", plot_png(result, name))
            self.stdout.write(f"wrote {len(PLOTS)} plots into {folder}")
        if opts["json"]:
            text = json.dumps(services.public_result(result), indent=2)
            write_atomic(Path(opts["json"]), text.encode())
            self.stdout.write(f"wrote {opts['json']}")

    def _table(self, result: dict[str, Any]) -> None:
        p = result["params"]
        self.stdout.write(
            f"{p['trace']}: {p['jobs']} jobs, {p['warmup_jobs']} warm-up, machine "
            f"{p['machine_procs']} processors, runtime model {p['runtime_model']}, "
            f"wait {p['wait_method']}, runtime {p['runtime_method']}"
        )
        if not p.get("same_methods_as_live", True):
            self.stdout.write(
                f"(the live service answers with wait {p['live_wait_method']} and runtime "
                f"{p['live_runtime_method']}: this replay proves the decision code, not those "
                "answers)"
            )
        self.stdout.write(
            f"{'strategy':<10}{'jobs':>7}{'wait min':>10}{'run min':>9}{'resp min':>10}"
            f"{'vs base':>9}{'bsld':>8}{'util':>7}{'work':>6}{'molded':>8}{'delayed':>8}"
            f"{'guard':>7}{'cpu s':>8}{'pred/s':>8}"
        )
        base = result.get("baseline", {}).get("mean_response_s")
        for name in (s for s in STRATEGIES if s in result):
            r = result[name]
            change = f"{r['mean_response_s'] / base - 1:+.0%}" if base else "-"
            rate = r.get("predictions_per_cpu_s") or 0
            g = r.get("guard", {}).get("guard") if "guard" in r else p.get("guard")
            guard = f"{g:.2f}" if isinstance(g, float | int) and name != "baseline" else "-"
            self.stdout.write(
                f"{name:<10}{r['jobs']:>7}{r['mean_wait_s'] / 60:>10.1f}"
                f"{r['mean_run_s'] / 60:>9.1f}"
                f"{r['mean_response_s'] / 60:>10.1f}{change:>9}{r['mean_bounded_slowdown']:>8.1f}"
                f"{r['utilisation']:>7.3f}{r.get('work_ratio') or 0:>6.2f}"
                f"{r['molded_share']:>8.1%}{r['delayed_share']:>8.1%}"
                f"{guard:>7}{r['cpu_seconds']:>8.0f} {rate:>7.0f}"
            )
