"""All parameters of the runtime prediction, in one place (docs/runtime.md).

Defaults are the paper's (``002``, section on runtime prediction): k = 25 tuples, l = 10 jobs,
m = 0.5 load span, X = 50 %, 20 load bins, ranges compacted to 20 %, merge threshold 50 %,
at most 25 ranges, new ranges share probability 0.1, relevant history starts at 10 jobs and
extends to 90 % overlap. The rest are choices the paper leaves open; each is documented in
``docs/runtime.md``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

#: Fallback levels of the relevant history, most specific first.
LEVELS = ("tuple", "user", "size")


@dataclass(frozen=True)
class RuntimeParams:
    """Knobs of the load-function rangeSet predictor and of its evaluation."""

    # Load (seed: one week of 30-minute intervals before t).
    load_window_s: float = 7 * 86400.0
    load_interval_s: float = 1800.0
    # Load functions (seed: k, l, m, X, 20 bins); False = ablation without any function.
    use_load_functions: bool = True
    n_tuples: int = 25
    min_tuple_jobs: int = 10
    min_load_span: float = 0.5
    n_load_bins: int = 20
    max_step: float = 0.5
    # DBSCAN inside a load bin works on log runtimes, so eps is a ratio: exp(0.2) ~ 22 %.
    dbscan_eps: float = 0.2
    dbscan_min_samples: int = 2
    # Relevant history (seed: start with 10, extend to 90 % of the tuple's range).
    history_start: int = 10
    history_overlap: float = 0.9
    # Ranges (seed: 20 % compaction, 50 % merge overlap, 0.1 for new ranges, 25 ranges).
    shift: str = "relative"
    compact_ratio: float = 1.2
    widen_to_ratio: bool = True
    merge_overlap: float = 0.5
    new_range_mass: float = 0.1
    max_ranges: int = 25
    min_runtime_s: float = 1.0
    # Evaluation.
    tune_fraction: float = 0.2

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def with_changes(self, **changes: Any) -> RuntimeParams:
        return replace(self, **changes)
