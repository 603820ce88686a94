"""Choose a site's guard on its tuning part only: advice that never hurts.

A molded size (or a hold) is acted on only when its predicted response beats submitting as
asked by more than the guard (``arrival.guarded``). Which guard a site needs depends on how
far its predictions can be trusted there, so it is learnt, never set from test results:

1. replay the tuning part alone (the first ``tune_fraction`` of the arrivals, the warm-up of
   the evaluation, which the evaluation never scores), with the policy acting on its second
   half and the first half warming the predictor up;
2. for each guard of :data:`GUARDS` (1.0: never mold nor hold) and the strategy at hand,
   the mean response and mean bounded slowdown of the acting half;
3. keep the guards under which neither figure is worse than the plain replay's; among them
   the one with the lowest mean response (the smaller guard at a tie). Guard 1.0 always
   qualifies (it is the plain replay), so a site where the advice does not pay gets none.

Holds are judged against molding alone: with the molding guard chosen as above, the hold
threshold of :data:`THRESHOLDS` (1.0: never hold, i.e. molding alone) is the one with the
lowest mean response among those no worse than molding alone on the tuning part
(:func:`choose_hold`), so delay adds to molding or is switched off. At a tie the larger
threshold (fewer holds) is kept: a threshold under which the tuning part's replay held no job
is molding alone's replay, and ties it without any evidence that its holds help (on the
5,000-job demo trace, whose tuning part is 1,000 arrivals, 0.7 was chosen that way and then
held 0.4% of the test part's jobs, 2.7% worse than molding alone in mean response; stop 38).
A hold must be no worse
than molding alone in both figures on the acting part *and on each of its halves*: a
threshold that wins on the whole part through one stretch of it and loses on the other
(held jobs whose predicted gain did not come true) did not carry beyond the tuning part on
the shared logs (docs/results.md, "Advice that never hurts"), so delay is kept only where
its gain is steady.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jobmolding.core.evaluate import MoldingSetup
    from jobmolding.core.policy import MoldingParams

GUARDS = (0.0, 0.1, 0.25, 0.5, 1.0)
THRESHOLDS = (0.3, 0.5, 0.7, 1.0)


@dataclass(frozen=True)
class GuardChoice:
    """The chosen guard and what each candidate guard gave on the tuning part."""

    guard: float
    tried: list[dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        return {"guard": self.guard, "chosen_on": "tuning part", "tried": self.tried}


def tuning_setup(setup: MoldingSetup) -> MoldingSetup:
    """The tuning part as a replay of its own: its first half warms up, its second acts."""
    n = setup.n_warmup
    jobs = setup.jobs
    cut = replace(
        jobs,
        **{
            f: getattr(jobs, f)[:n]
            for f in ("job_id", "submit_s", "runtime_s", "estimate_s", "n_procs", "user_id")
        },
    )
    return replace(
        setup,
        jobs=cut,
        requests=setup.requests.take(slice(0, n)),
        frame=setup.frame.iloc[:n].reset_index(drop=True),
        n_warmup=n // 2,
    )


def choose_guard(
    setup: MoldingSetup,
    params: MoldingParams,
    run: Callable[[MoldingSetup, MoldingParams], Any],
    guards: tuple[float, ...] = GUARDS,
) -> GuardChoice:
    """The guard for ``params.strategy`` on ``setup``'s tuning part (module docstring).

    ``run(setup, params)`` replays once and returns its figures (``metrics.summarise``).
    """
    tune = tuning_setup(setup)
    base = run(tune, replace(params, strategy="baseline"))
    chosen, tried = _lowest_never_worse(
        guards, base, lambda g: base if g >= 1.0 else run(tune, replace(params, guard=g)),
        "guard", "never_worse",
    )  # fmt: skip
    return GuardChoice(chosen, tried)


def choose_hold(
    setup: MoldingSetup,
    params: MoldingParams,
    run: Callable[[MoldingSetup, MoldingParams], Any],
    molding: dict[str, Any],
    thresholds: tuple[float, ...] = THRESHOLDS,
) -> dict[str, Any]:
    """The hold threshold for ``params`` (strategy delay, its molding guard set) on the
    tuning part: the lowest mean response among the thresholds no worse than ``molding``
    (molding alone's tuning figures) in response and bounded slowdown, the larger at a tie;
    1.0 is molding alone."""
    tune = tuning_setup(setup)
    chosen, tried = _lowest_never_worse(
        thresholds, molding,
        lambda th: molding if th >= 1.0 else run(tune, replace(params, threshold=th)),
        "threshold", "never_worse_than_molding", by_halves=True, ties_to_larger=True,
    )  # fmt: skip
    return {"threshold": chosen, "chosen_on": "tuning part", "tried": tried}


def _lowest_never_worse(
    values: tuple[float, ...],
    reference: dict[str, Any],
    figures: Callable[[float], dict[str, Any]],
    name: str,
    flag: str,
    by_halves: bool = False,
    ties_to_larger: bool = False,
) -> tuple[float, list[dict[str, Any]]]:
    """The value of ``values`` with the lowest mean response among those whose mean response
    and mean bounded slowdown are no worse than ``reference``'s (1.0 when none is), and what
    each value gave (rows named ``name``, the test in ``flag``). ``by_halves``: no worse on
    each half of the acting part too (figures and reference carry ``halves``). At equal mean
    response the earlier of ``values`` wins, or the later with ``ties_to_larger``."""
    tried: list[dict[str, Any]] = []
    best = (float("inf"), 1.0)
    for v in values:
        fig = figures(v)
        ok = no_worse(fig, reference)
        if by_halves and fig is not reference:
            mine: list[dict[str, Any]] = fig.get("halves", [])
            theirs: list[dict[str, Any]] = reference.get("halves", [])
            ok = ok and all(no_worse(a, b) for a, b in zip(mine, theirs, strict=True))
        tried.append(
            {
                name: v,
                "mean_response_s": fig["mean_response_s"],
                "mean_bounded_slowdown": fig["mean_bounded_slowdown"],
                "halves": fig.get("halves", []),
                flag: bool(ok),
            }
        )
        lower = fig["mean_response_s"] < best[0]
        tie = ties_to_larger and fig["mean_response_s"] == best[0]
        if ok and (lower or tie):
            best = (fig["mean_response_s"], v)
    return best[1], tried


def no_worse(fig: dict[str, Any], reference: dict[str, Any]) -> bool:
    """Mean response and mean bounded slowdown both at most ``reference``'s."""
    return bool(
        fig["mean_response_s"] <= reference["mean_response_s"]
        and fig["mean_bounded_slowdown"] <= reference["mean_bounded_slowdown"]
    )
