"""How a site's wait method was set up, in words a user reads (the answers' ``methods``)."""

from __future__ import annotations

from typing import Any

from queuecast.humanize import duration

#: ``auto``'s weight rules (``predictor.core.wait.selection.RULES``) as the page words them
RULE_WORDS = {
    "adahedge": "AdaHedge weights over the methods",
    "adahedge_stacked": "AdaHedge weights over the methods and their best mix",
}


def _words(rule: str) -> str:
    return RULE_WORDS.get(rule, f"the {rule} weights")


def wait_reason(method: Any) -> str | None:
    """How ``auto``'s weight rule was chosen for this site, in words; None for a method
    without a choice (``AutoWait.rule_choice_``)."""
    record = getattr(method, "rule_choice_", None)
    if not record:
        return None
    aae = record.get("aae_s")
    if not aae:
        return f"{_words(record['rule'])} ({record.get('reason', 'the first candidate')})"
    rule = record["rule"]
    others = ", ".join(f"{duration(v)} for {_words(r)}" for r, v in aae.items() if r != rule)
    return (
        f"{_words(rule)}, chosen here: off by {duration(aae[rule])} on average on the "
        f"tuning part's {record['validation_jobs']:,} validation jobs, against {others}"
    )
