"""A site job's decision in sentences: which size and why, now or later and why.

Reads the decision record stored with the job (``holdqueue.services.live``): ``molding`` (
``jobmolding.core.choice.MoldingDecision.as_dict``: the candidates with their predicted wait,
runtime, response and score), ``delay`` (``jobmolding.core.delay.DelayDecision.as_dict``) and,
for a job that arrived during a hold, ``hold``. The numbers are the record's; only the words
are made here: "holding it 4 min 6 s would not save 30% of its 2 min 3 s response, so it was
submitted now".
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from queuecast.humanize import duration, percent


def sizes_text(sizes: list[int]) -> str:
    """``[4, 8, 16]`` -> ``"4, 8 and 16"``."""
    words = [str(s) for s in sizes]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def molding_sentence(molding: dict[str, Any] | None, asked: int, mold: bool) -> str:
    """Which size runs, and why, from the molding record."""
    if not molding or not molding.get("candidates"):
        if not mold:
            return f"You asked Queuecast to keep your size: it runs on {asked} processors."
        return f"It runs on the {asked} processors you asked for."
    cands = sorted(molding["candidates"], key=lambda c: c["procs"])
    chosen_procs = int(molding.get("chosen_procs", asked))
    chosen = next((c for c in cands if c["procs"] == chosen_procs), cands[0])
    own = next((c for c in cands if c["procs"] == asked), None)
    predicted = (
        f"predicted wait {duration(chosen['wait_s'])} + runtime {duration(chosen['runtime_s'])}"
        f" = response {duration(chosen['response_s'])}"
    )
    if len(cands) == 1:
        return (
            f"Only the size you asked for, {asked} processors, was tried (you have used no "
            f"other size here): {predicted}."
        )
    tried = (
        f"Of the {len(cands)} sizes tried ({sizes_text([c['procs'] for c in cands])} processors)"
    )
    if chosen_procs == asked:
        return f"{tried}, the {asked} you asked for scores best: {predicted}."
    against = f", against {duration(own['response_s'])} at the {asked} you asked for" if own else ""
    why = ""
    if own and chosen["response_s"] > own["response_s"]:
        why = (
            " The score judges the whole predicted spread of the response (here "
            f"{chosen.get('n_ranges', '?')} ranges against {own.get('n_ranges', '?')}), not "
            "only its middle, so a longer but narrower answer can win."
        )
    return (
        f"{tried}, {chosen_procs} processors scores best: {predicted}{against}; so it runs on "
        f"{chosen_procs} processors.{why}"
    )


def delay_sentence(
    delay: dict[str, Any] | None,
    hold: dict[str, Any] | None,
    allow_delay: bool,
    release_at: dt.datetime | None,
    held: bool,
    begin: dict[str, Any] | None = None,
) -> str:
    """Now or later, and why, from the delay record (or the hold the job joined, or the
    start time its owner asked for)."""
    when = f"{release_at:%Y-%m-%d %H:%M:%S} UTC" if release_at else "its release time"
    if begin:
        verb = "it is held until then" if held else "it was held until then"
        return (
            f"You asked it to start no earlier than {when}, so {verb} and goes to the batch "
            "system as you asked it (Queuecast chooses sizes on the queue at arrival, which "
            "says nothing about the queue at a later start)."
        )
    if hold:
        return (
            f"It arrived while job #{hold.get('follows')} was held, so it waits behind it in the "
            f"hold queue and goes to the batch system at {when}, keeping the spacing of their "
            "arrivals."
        )
    if not delay:
        if not allow_delay:
            return "You did not allow a delayed submission, so it was submitted now."
        return "It was submitted now."
    now_s, rule = float(delay["predicted_now_s"]), percent(delay["threshold"])
    if delay.get("future_s") is None:
        return (
            "No running job is predicted to end later, so holding it could not help: it was "
            "submitted now."
        )
    wait_s, later_s = float(delay["delay_s"]), float(delay["predicted_future_s"])
    if not delay.get("future_predicted", True) and not delay["delay"]:
        return (
            f"Holding it {duration(wait_s)} would not save {rule} of its {duration(now_s)} "
            "response even if it then started and ended at once (the hold alone is more than "
            f"{percent(1.0 - float(delay['threshold']))} of it), so it was submitted now."
        )
    total_s = float(delay["delayed_response_s"])
    size = ""
    if int(delay["procs_future"]) != int(delay["procs_now"]):
        size = f" on {delay['procs_future']} processors"
    held_math = (
        f"held: {duration(wait_s)} + {duration(later_s)}{size} = {duration(total_s)} from now"
    )
    if not delay["delay"]:
        return (
            f"Holding it {duration(wait_s)} would not save {rule} of its {duration(now_s)} "
            f"response ({held_math}), so it was submitted now."
        )
    saving = 1.0 - total_s / now_s if now_s > 0 else 0.0
    verb = "it is held until" if held else "it was held until"
    return (  # floored: 99.5% is not "100%"
        f"Holding it {duration(wait_s)} saves {math.floor(100 * saving)}% of its {duration(now_s)} "
        f"response ({held_math}), more than the {rule} the rule asks for, so {verb} {when}."
    )


def sentences_for(job: Any) -> dict[str, str]:
    """Both sentences for a ``SiteJob`` (its stored decision record and flags)."""
    record = job.decision or {}
    return {
        "molding": molding_sentence(record.get("molding"), job.procs_requested, job.mold),
        "delay": delay_sentence(
            record.get("delay"), record.get("hold"), job.allow_delay, job.release_at,
            job.state == "held", record.get("begin"),
        ),
    }  # fmt: skip


def start_check(job: Any) -> dict[str, Any] | None:
    """Once the job has started: the start predicted at its arrival (arrival + the chosen
    size's predicted wait; a held job: its release + the wait predicted for the release; a
    job submitted as asked: arrival + its stored ``prediction``'s wait),
    the actual start, and the error (actual - predicted, seconds)."""
    decision = job.decision or {}
    molding = decision.get("molding_at_release") or decision.get("molding")
    if not molding and decision.get("prediction"):  # submitted as asked: its one prediction
        molding = {"candidates": [decision["prediction"]]}
    if not job.started_at or not molding or not job.arrived_at:
        return None
    chosen = [c for c in molding.get("candidates", []) if c.get("procs") == job.procs_chosen]
    if not chosen:
        return None
    base = (
        job.release_at if decision.get("molding_at_release") and job.release_at else job.arrived_at
    )
    predicted = base + dt.timedelta(seconds=float(chosen[0]["wait_s"]))
    error_s = (job.started_at - predicted).total_seconds()
    return {"predicted": predicted, "actual": job.started_at, "error_s": error_s,
            "late": error_s > 0, "off_by_s": abs(error_s)}  # fmt: skip
