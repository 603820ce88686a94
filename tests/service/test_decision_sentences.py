"""A site job's decision in sentences (``holdqueue.pages_decision``), from stored records."""

from __future__ import annotations

import datetime as dt

from holdqueue.pages_decision import delay_sentence, molding_sentence

# The record of a real demo-site job (16 processors, 2 h): hold 246 s, then 123 s, against
# 123 s now; the rule asks for (1 - 0.3) x 123 = 86 s.
KEPT_NOW = {
    "delay": False, "now_s": 383.2, "future_s": 629.0, "delay_s": 245.82, "procs_now": 16,
    "procs_future": 16, "predicted_now_s": 123.386, "predicted_future_s": 123.386,
    "delayed_response_s": 369.207, "threshold": 0.3, "reason": "delay 246 s + ...",
}  # fmt: skip


def test_a_job_kept_now_says_the_hold_would_not_save_enough() -> None:
    assert delay_sentence(KEPT_NOW, None, True, None, False) == (
        "Holding it 4 min 6 s would not save 30% of its 2 min 3 s response (held: 4 min 6 s + "
        "2 min 3 s = 6 min 9 s from now), so it was submitted now."
    )


def test_a_held_job_says_what_it_saves_and_until_when() -> None:
    changes = {
        "delay": True,
        "delay_s": 1200.0,
        "predicted_now_s": 50_000.0,
        "predicted_future_s": 3600.0,
        "delayed_response_s": 4800.0,
        "procs_future": 8,
    }
    held = {**KEPT_NOW, **changes}
    release = dt.datetime(2026, 12, 1, 18, 30, tzinfo=dt.UTC)
    assert delay_sentence(held, None, True, release, True) == (
        "Holding it 20 min saves 90% of its 13 h 53 min response (held: 20 min + 1 h on 8 "
        "processors = 1 h 20 min from now), more than the 30% the rule asks for, so it is held "
        "until 2026-12-01 18:30:00 UTC."
    )
    assert "so it was held until" in delay_sentence(held, None, True, release, False)
    almost = {**held, "delayed_response_s": 100.0}  # saves 99.8%: not "100%"
    assert "saves 99% of its" in delay_sentence(almost, None, True, release, True)


def test_a_hold_that_fails_alone_says_its_response_was_not_predicted() -> None:
    # The demo site's 32-processor job: hold 255 s against 314 s now; 0.7 x 314 = 220 s, so
    # the hold alone fails and the response after it is never predicted (0 s, a lower bound).
    alone = {**KEPT_NOW, "delay_s": 255.15, "predicted_now_s": 313.99,
             "predicted_future_s": 0.0, "delayed_response_s": 255.15,
             "future_predicted": False}  # fmt: skip
    assert delay_sentence(alone, None, True, None, False) == (
        "Holding it 4 min 15 s would not save 30% of its 5 min 14 s response even if it then "
        "started and ended at once (the hold alone is more than 70% of it), so it was "
        "submitted now."
    )
    assert "0 s" not in delay_sentence(alone, None, True, None, False)


def test_the_arrival_decision_marks_a_future_it_did_not_predict() -> None:
    from jobmolding.core.delay import decide_delay

    alone = decide_delay(0.0, 255.0, 32, 314.0, 32, 0.0, future_predicted=False)
    assert not alone.delay and alone.as_dict()["future_predicted"] is False
    assert "none (not predicted)" in alone.reason and "predicted 0 s" not in alone.reason
    assert decide_delay(0.0, 50.0, 32, 314.0, 32, 100.0).as_dict()["future_predicted"] is True


def test_no_future_no_delay_allowed_and_a_follower() -> None:
    none_ends = {**KEPT_NOW, "future_s": None}
    assert delay_sentence(none_ends, None, True, None, False).startswith(
        "No running job is predicted to end later"
    )
    assert delay_sentence(None, None, False, None, False) == (
        "You did not allow a delayed submission, so it was submitted now."
    )
    release = dt.datetime(2026, 12, 1, 19, 0, tzinfo=dt.UTC)
    assert delay_sentence(KEPT_NOW, {"follows": 7}, True, release, True) == (
        "It arrived while job #7 was held, so it waits behind it in the hold queue and goes to "
        "the batch system at 2026-12-01 19:00:00 UTC, keeping the spacing of their arrivals."
    )


def cand(procs: int, wait: float, run: float) -> dict:
    return {"procs": procs, "wait_s": wait, "runtime_s": run, "response_s": wait + run,
            "score": 0.5, "n_ranges": 1}  # fmt: skip


def test_molding_sentences_name_the_sizes_tried_and_the_choice() -> None:
    molded = {"original_procs": 16, "chosen_procs": 4,
              "candidates": [cand(16, 7200.0, 600.0), cand(4, 0.0, 1800.0)]}  # fmt: skip
    assert molding_sentence(molded, 16, True) == (
        "Of the 2 sizes tried (4 and 16 processors), 4 processors scores best: predicted wait "
        "0 s + runtime 30 min = response 30 min, against 2 h 10 min at the 16 you asked for; so "
        "it runs on 4 processors."
    )
    pair = [{**cand(16, 0.0, 122.0), "n_ranges": 15}, {**cand(64, 0.0, 386.0), "n_ranges": 7}]
    slower = {"chosen_procs": 64, "candidates": pair}
    assert molding_sentence(slower, 16, True).endswith(
        "so it runs on 64 processors. The score judges the whole predicted spread of the "
        "response (here 7 ranges against 15), not only its middle, so a longer but narrower "
        "answer can win."
    )
    kept = {**molded, "chosen_procs": 16}
    assert molding_sentence(kept, 16, True).startswith(
        "Of the 2 sizes tried (4 and 16 processors), the 16 you asked for scores best"
    )
    alone = {"chosen_procs": 16, "candidates": [cand(16, 0.0, 123.0)]}
    assert molding_sentence(alone, 16, True) == (
        "Only the size you asked for, 16 processors, was tried (you have used no other size "
        "here): predicted wait 0 s + runtime 2 min 3 s = response 2 min 3 s."
    )
    assert molding_sentence(None, 16, False) == (
        "You asked Queuecast to keep your size: it runs on 16 processors."
    )
