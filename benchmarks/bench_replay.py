"""Replay speed: our EASY engine against AccaSim's on the same trace and machine size.

    .venv/bin/python benchmarks/bench_replay.py [--trace HPC2N-2002-2.2-cln.swf.gz]
        [--accasim-trace KTH-SP2-1996-2.1-cln.swf.gz] [--accasim-python PATH] [--no-accasim]

Prints, for our simulator: parse and simulate seconds, jobs per second, peak memory
(``resource.getrusage``), and the wall time of whole processes (a bare Python script
and ``manage.py replay``). For AccaSim 1.1.3: its EASYBackfilling + FirstFit on one
node of N cores (its fastest set-up), run in a child process, and the speed ratio.

AccaSim is optional and never a project dependency. Install it apart, e.g.

    python3 -m venv /tmp/accasim-venv && /tmp/accasim-venv/bin/pip install accasim

and pass ``--accasim-python /tmp/accasim-venv/bin/python`` (or set ACCASIM_PYTHON).
AccaSim needs ``collections.Mapping`` on Python 3.10+: the child script restores it.
Its EASY lets backfilled jobs ignore the head's reservation (spec), so only its
speed is compared, not its schedule.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pyss_adapter.core.jobs import sim_jobs  # noqa: E402
from pyss_adapter.core.replay import replay_jobs  # noqa: E402
from traces.core.swf import read_swf  # noqa: E402

TRACES = Path(os.environ.get("QUEUECAST_TRACES_DIR", ROOT.parent / "shared" / "traces"))

BARE_SCRIPT = """
import sys
sys.path.insert(0, {root!r})
from traces.core.swf import read_swf
from pyss_adapter.core.replay import replay
trace = read_swf({path!r})
result = replay(trace.jobs, trace.machine_procs, scheduler="easy", mode={mode!r})
print(len(result.start_s))
"""

ACCASIM_SCRIPT = r"""
import collections, collections.abc, json, os, resource, sys, tempfile, time
collections.Mapping = collections.abc.Mapping  # AccaSim 1.1.3 predates Python 3.10
from accasim.base.simulator_class import Simulator
from accasim.base.scheduler_class import EASYBackfilling
from accasim.base.allocator_class import FirstFit
from accasim.utils.reader_class import DefaultTweaker

swf, procs = sys.argv[1], int(sys.argv[2])


class OneNode(DefaultTweaker):
    # every job asks for its p processors as p cores of the single N-core node
    def tweak_function(self, d):
        d = super().tweak_function(d)
        d["requested_nodes"] = 1
        d["requested_resources"] = {"core": d["core"]}
        return d


work = tempfile.mkdtemp()
config = os.path.join(work, "sys.config")
with open(config, "w") as fh:
    json.dump({"groups": {"g0": {"core": procs}}, "resources": {"g0": 1},
               "equivalence": {"processor": {"core": 1}}, "start_time": 0}, fh)
started, cpu = time.perf_counter(), time.process_time()
sim = Simulator(swf, config, EASYBackfilling(FirstFit()),
                tweak_function=OneNode(0, None, {"processor": {"core": 1}}),
                RESULTS_FOLDER_PATH=work, scheduling_output=False, statistics_output=False,
                show_statistics=False)
sim.start_simulation()
# VmHWM: ru_maxrss of an exec'd child may carry its parent's peak on Linux
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")]
print(json.dumps({"seconds": time.perf_counter() - started, "cpu_s": time.process_time() - cpu,
                  "jobs": sim.loaded_jobs, "dispatched": sim.dispatched_jobs,
                  "peak_rss_kb": int(hwm[0].split()[1]) if hwm else
                  resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def ours(path: Path, mode: str) -> dict:
    """In-process: parse, convert, simulate; peak RSS of this process."""
    t0 = time.perf_counter()
    trace = read_swf(path)
    t1, c1 = time.perf_counter(), time.process_time()
    jobs = sim_jobs(trace.jobs, int(trace.machine_procs), mode)
    result = replay_jobs(jobs, "easy")
    t2, c2 = time.perf_counter(), time.process_time()
    return {
        "jobs": len(result.start_s),
        "machine_procs": jobs.machine_procs,
        "parse_s": t1 - t0,
        "simulate_s": t2 - t1,
        "simulate_cpu_s": c2 - c1,
        "jobs_per_s": len(result.start_s) / (t2 - t1),
        "jobs_per_cpu_s": len(result.start_s) / (c2 - c1),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def whole_process(command: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT, capture_output=True)
    return time.perf_counter() - t0


def whole_processes(path: Path, mode: str) -> dict:
    bare = [sys.executable, "-c", BARE_SCRIPT.format(root=str(ROOT), path=str(path), mode=mode)]
    manage = [sys.executable, "manage.py", "replay", "--swf", str(path), "--mode", mode]
    return {"bare_script_s": whole_process(bare), "manage_py_replay_s": whole_process(manage)}


def accasim(python: str, path: Path, procs: int) -> dict:
    """AccaSim in a child process on the decompressed trace."""
    with tempfile.TemporaryDirectory() as work:
        plain = Path(work) / path.name.removesuffix(".gz")
        with gzip.open(path, "rb") as src, plain.open("wb") as dst:
            shutil.copyfileobj(src, dst)
        script = Path(work) / "run_accasim.py"
        script.write_text(ACCASIM_SCRIPT)
        t0 = time.perf_counter()
        done = subprocess.run(
            [python, str(script), str(plain), str(procs)], capture_output=True, text=True, cwd=work
        )
        wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"AccaSim failed:\n{done.stderr[-2000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["wall_s"] = wall
    out["jobs_per_s"] = out["jobs"] / out["seconds"]
    out["jobs_per_cpu_s"] = out["jobs"] / out["cpu_s"]
    return out


def find_accasim(given: str | None) -> str | None:
    for candidate in (given, os.environ.get("ACCASIM_PYTHON"), "/tmp/accasim-venv/bin/python"):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="HPC2N-2002-2.2-cln.swf.gz")
    parser.add_argument("--accasim-trace", help="a smaller trace for AccaSim (default: --trace)")
    parser.add_argument("--accasim-python", help="a Python with accasim installed")
    parser.add_argument("--mode", default="pyss", choices=["pyss", "default"])
    parser.add_argument("--no-accasim", action="store_true")
    args = parser.parse_args()

    path = TRACES / args.trace
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus")
    mine = ours(path, args.mode)
    print(
        f"queuecast EASY ({args.mode} mode) on {args.trace}: {mine['jobs']} jobs, "
        f"N={mine['machine_procs']}: parse {mine['parse_s']:.2f} s, simulate "
        f"{mine['simulate_s']:.2f} s wall / {mine['simulate_cpu_s']:.2f} s CPU = "
        f"{mine['jobs_per_s']:,.0f} jobs/s ({mine['jobs_per_cpu_s']:,.0f} per CPU s), "
        f"peak RSS {mine['peak_rss_mb']:.0f} MB"
    )
    whole = whole_processes(path, args.mode)
    print(
        f"whole process (start-up + parse + simulate): bare script {whole['bare_script_s']:.2f} s,"
        f" manage.py replay {whole['manage_py_replay_s']:.2f} s"
    )
    python = None if args.no_accasim else find_accasim(args.accasim_python)
    if python is None:
        print("AccaSim: skipped (no --accasim-python / ACCASIM_PYTHON; see the module docstring)")
        return
    acc_name = args.accasim_trace or args.trace
    acc_path = TRACES / acc_name
    theirs = accasim(python, acc_path, int(read_swf(acc_path).machine_procs))
    print(
        f"AccaSim 1.1.3 EASY on {acc_name} (one node of N cores): {theirs['jobs']} jobs in "
        f"{theirs['seconds']:.2f} s wall / {theirs['cpu_s']:.2f} s CPU = "
        f"{theirs['jobs_per_s']:,.0f} jobs/s ({theirs['jobs_per_cpu_s']:,.0f} per CPU s), "
        f"peak RSS {theirs['peak_rss_kb'] / 1024:.0f} MB"
    )
    same = mine if acc_name == args.trace else ours(acc_path, args.mode)
    print(
        f"speed ratio on {acc_name}: wall {same['jobs_per_s'] / theirs['jobs_per_s']:.0f}x, "
        f"CPU {same['jobs_per_cpu_s'] / theirs['jobs_per_cpu_s']:.0f}x "
        f"(queuecast {same['jobs_per_cpu_s']:,.0f} / AccaSim {theirs['jobs_per_cpu_s']:,.0f} "
        "jobs per CPU second)"
    )


if __name__ == "__main__":
    main()
