"""A run's parameters as a user reads them: labelled values with units, never a dict literal.

``param_rows(params)`` turns the JSON a run stores (``{"tune_fraction": 0.2, "params":
{"load_window_s": 604800.0, ...}}``) into rows ``{"label", "value", "term"}``: "Tuning part"
/ "20% of the jobs", "Load history window" / "7 d". Nested settings become rows of their own
under a prefix; a key not listed here is still shown in words, its value by its name's unit
(``_s``: a duration, ``_fraction``/``_share``: a percentage).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from queuecast import humanize

Fmt = Callable[[Any], str]


def duration(v: Any) -> str:
    return humanize.duration(v)


def share(of: str = "") -> Fmt:
    return lambda v: humanize.percent(v) + (f" {of}" if of else "")


def count(unit: str) -> Fmt:
    def fmt(v: Any) -> str:
        n = humanize.as_number(v)
        return "–" if n is None else f"{n:,.0f} {unit}"

    return fmt


def times(v: Any) -> str:
    n = humanize.as_number(v)
    return "–" if n is None else f"{n:g}×"


def yes_no(v: Any) -> str:
    return "yes" if v else "no"


def choice(names: Mapping[str, str]) -> Fmt:
    return lambda v: names.get(str(v), str(v))


def plain(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}" if abs(v) >= 10_000 else str(v)
    return str(v)


GRIDS = {
    "none": "only the size asked for (the seed's rule)",
    "pow2": "every power of two up to the machine size",
    "range": "powers of two around the size asked for, its half and double",
}
#: key -> (label, format, glossary term or "")
LABELS: dict[str, tuple[str, Fmt, str]] = {
    # evaluations (predictor.services.evaluations / predictor.services.runtime)
    "tune_fraction": ("Tuning part", share("of the jobs"), "tuning-part"),
    "limit": ("Test jobs, at most", count("jobs"), ""),
    "seed": ("Random seed", plain, ""),
    "simulate_waits": ("Waits simulated where the log has none", yes_no, ""),
    "jobs": ("Jobs", count("jobs"), ""),
    "state_s": ("System-state sweep took", duration, ""),
    "elapsed_s": ("Took", duration, ""),
    "prepare_s": ("Preparation took", duration, ""),
    "total_s": ("Took", duration, ""),
    "n_jobs": ("Jobs in the trace", count("jobs"), ""),
    "n_tune": ("Jobs in the tuning part", count("jobs"), "tuning-part"),
    "n_targets": ("Test jobs", count("jobs"), ""),
    "targets": ("Test jobs", count("jobs"), ""),
    "test_usable": ("Test jobs available", count("jobs"), ""),
    "machine_procs": ("Machine size", count("processors"), ""),
    "params": ("rangeSet", plain, "rangeset"),
    # the rangeSet's settings (predictor.core.runtime.params.RuntimeParams)
    "load_window_s": ("Load history window", duration, "load-function"),
    "load_interval_s": ("Load interval", duration, "load-function"),
    "use_load_functions": ("Load functions used", yes_no, "load-function"),
    "n_tuples": ("Tuples with a load function, at most", count("tuples"), "tuple"),
    "min_tuple_jobs": ("Jobs a tuple needs for a load function", count("jobs"), "tuple"),
    "min_load_span": ("Load span a tuple needs", share("of the machine"), "load-function"),
    "n_load_bins": ("Load bins", count("bins"), "load-function"),
    "max_step": ("Largest runtime step between load bins", share(), "load-function"),
    "dbscan_eps": ("Runtime cluster radius (log scale)", plain, ""),
    "dbscan_min_samples": ("Jobs per runtime cluster, at least", count("jobs"), ""),
    "history_start": ("Relevant history, first", count("jobs"), ""),
    "history_overlap": ("Relevant history spans", share("of the tuple's runtime range"), ""),
    "shift": ("How runtimes move with the load", plain, "load-function"),
    "compact_ratio": ("Range upper end over lower end, at most", times, "rangeset"),
    "widen_to_ratio": ("Narrower ranges widened to that ratio", yes_no, "rangeset"),
    "merge_overlap": ("Ranges merged above an overlap of", share(), "rangeset"),
    "new_range_mass": ("Probability shared by ranges with no past runtime", share(), ""),
    "max_ranges": ("Ranges kept, at most", count("ranges"), "rangeset"),
    "min_runtime_s": ("Shortest runtime", duration, ""),
    # molding runs (jobmolding.core.policy.MoldingParams and jobmolding.services)
    "runtime_model": (
        "Runtime of a molded job",
        choice({"paper": "paper (the user's past runtimes)", "downey": "downey (speedup model)"}),
        "paper-model",
    ),
    "grid": ("Sizes tried for a user without history", choice(GRIDS), "candidates"),
    "grid_factor": ("Grid spread around the size asked for", times, "candidates"),
    "threshold": ("Hold only when it saves more than", share("of the response"), "delay-threshold"),
    "merge_fraction": ("Running jobs' ends merged within", share("of the time to the first"), ""),
    "sigma": ("Variance of parallelism σ (downey)", plain, "downey-model"),
    "downey_a": ("Average parallelism A (downey)", plain, "downey-model"),
    "trace": ("Trace", plain, "trace"),
    "warmup_jobs": ("Warm-up jobs (submitted unchanged)", count("jobs"), "tuning-part"),
    "max_limit_s": ("Machine's time limit", duration, ""),
    "predictor": ("Predictions by", plain, ""),
    "live_wait_method": ("The live service's wait method", plain, ""),
    "live_runtime_method": ("The live service's runtime method", plain, ""),
    "same_methods_as_live": ("Decided with the live service's methods", yes_no, ""),
    "scheduler": ("Scheduler", plain, "easy"),
}


#: What a setting left unset means (else an en dash).
UNSET = {
    "downey_a": "the size asked for",
    "max_limit_s": "none given: the largest time limit asked so far",
}


def words(key: str) -> str:
    """``"n_load_bins"`` -> ``"N load bins"``: a key nobody labelled, still in words."""
    return key.replace("_", " ").strip().capitalize()


def by_name(key: str, value: Any) -> str:
    """The value of an unlisted key, formatted by its name's unit."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return yes_no(value)
    if key.endswith("_s") and humanize.as_number(value) is not None:
        return humanize.duration(value)
    if key.endswith(("_fraction", "_share")):
        return humanize.percent(value)
    if isinstance(value, list | tuple):
        return ", ".join(plain(v) for v in value)
    return plain(value)


def param_rows(params: Mapping[str, Any] | None, prefix: str = "") -> list[dict[str, str]]:
    """Labelled rows of a run's parameters (nested mappings flattened under their label)."""
    rows: list[dict[str, str]] = []
    for key, value in (params or {}).items():
        label, fmt, term = LABELS.get(key, (words(key), lambda v, k=key: by_name(k, v), ""))
        if isinstance(value, Mapping):
            rows += param_rows(value, prefix=f"{prefix}{label}: ")
            continue
        text = UNSET.get(key, "–") if value is None else fmt(value)
        rows.append({"label": prefix + label, "value": text, "term": term})
    return rows


def cpu_hours_words(label: str) -> str:
    """The simulator's CPU-hours class labels ("<1", "1-10", ">=1000") in words with the unit."""
    if label.startswith(">="):
        return f"{label[2:].strip()} CPU-h or more"
    if label.startswith("<"):
        return f"under {label[1:].strip()} CPU-h"
    return label.replace("-", "–") + " CPU-h"
