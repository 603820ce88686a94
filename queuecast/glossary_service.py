"""Glossary entries of the service's answers: why a job waits, what starts it sooner, where
to submit and which methods answer (see :mod:`queuecast.glossary`)."""

from __future__ import annotations

from queuecast.glossary_term import Term

ANSWERS = "Answers"

TERMS = (
    Term(
        "why-it-waits",
        "why it waits",
        "What the job waits for: processors, the jobs queued ahead of it, or a hold.",
        """
        Queuecast simulates EASY backfilling forward from the queue at the job's arrival,
        every job running for its time limit and nobody else arriving (what squeue --start
        does). It simulates twice: behind the whole queue, and with the queue emptied. If
        both start the job at once, it waits for nothing. If both give the same later start,
        it waits for processors: nobody queued delays it, the running jobs must end first.
        If the start behind the queue is later, it waits for the jobs queued ahead, which
        start first in arrival order. A job the hold queue keeps back waits for its hold.

        This start can differ from the predicted wait above it: the wait method learns from
        the history how the queue really moved (jobs end before their limits, new jobs
        arrive); the simulation explains the queue as it stands.
        """,
        ANSWERS,
        "predictor/core/why/explain.py",
    ),
    Term(
        "jobs-ahead",
        "jobs ahead",
        "The running jobs (processors they hold, their expected ends) and the jobs queued "
        "before this one (processors they ask, their simulated starts and ends).",
        """
        The running jobs hold processors until their expected end: start plus time limit
        (a job past its limit is expected to end within a second). The queued jobs ahead are
        those that arrived earlier, in arrival order; their starts and ends are the EASY
        simulation's, each running for its time limit. A job without a time limit runs, in
        the simulation, for its predicted runtime.
        """,
        ANSWERS,
        "predictor/core/why/queue.py",
    ),
    Term(
        "sooner-change",
        "a change that starts it sooner",
        "The smallest single change found to start the job at least 1 min and 10% of its "
        "wait sooner: fewer processors or a shorter time limit.",
        """
        Each change is tried alone, as a new arrival in the same queue, with the same EASY
        simulation. Fewer processors: the largest smaller size that starts it sooner by at
        least max(60 s, 10% of the wait); the sizes tried are the halvings of the request
        and the processors free at each moment of the simulation before its start. Its time
        limit is kept, though a job on fewer processors may run longer. A shorter time
        limit: the longest limit with which it starts at once in a backfill hole, rounded
        down to whole minutes. The change shown first saves the most.

        A later submission never starts it sooner here: nobody else arrives, so it starts at
        the same time if submitted any time before then, and waits that much less.
        """,
        ANSWERS,
        "predictor/core/why/sooner.py",
    ),
    Term(
        "headline-rule",
        "the wait shown at a site",
        "How a site's predicted wait combines the history estimate and the queue-based "
        "start: the rule that erred least on the site's recent jobs, else the later of the two.",
        """
        A site answers a new request with two waits: what jobs like it waited in states like
        this one (the history estimate), and when an EASY run forward on the current queue
        starts it, each job running its predicted runtime (the queue-based start). The wait
        shown is one of: the later of the two, the history estimate alone, the earlier of the
        two, or their geometric mean.

        At each fit the site scores its last 200 finished jobs (the last to end, so that
        jobs that waited long are among them): a job submitted through the site on what it
        was told when it was submitted, any other job answered again from the state at its
        arrival. It shows the later of the two unless another rule's average error on those jobs is
        lower by more than 2 standard errors of the job-by-job differences (with fewer than
        20 jobs, the later). The interval around the wait is calibrated on
        the same jobs' errors of the wait shown.
        """,
        ANSWERS,
        "jobmolding/core/headline.py",
    ),
    Term(
        "backfill-hole",
        "backfill hole",
        "Processors free now that the first waiting job will not need before its "
        "reservation: a short enough job may use them at once.",
        """
        Under EASY backfilling the first waiting job that does not fit gets a reservation
        at the earliest time enough processors are expected to be free. Until then, the
        processors free now are a hole: a later job that fits them and ends, by its time
        limit, before the reservation starts at once.
        """,
        ANSWERS,
        "pyss_adapter/core/easy.py",
    ),
    Term(
        "accuracy-here",
        "accuracy here",
        "How the two methods that answer did on this trace's or site's most recent jobs, "
        "computed when you ask, each job predicted from what was known at its arrival.",
        """
        Waits: over the jobs that most recently started (a wait is known when its job starts),
        the wait method's average error (AAE) next to always answering "no wait", whose
        average error is the mean wait. A method that is not below it earns a warning.

        Runtimes: over the last 100 jobs that ended, the share whose runtime fell inside one
        of the runtime method's ranges (success) and how long the ranges were (coverage),
        next to the same figures for taking the requested time as the runtime. A method
        whose success is not above the requested time's earns a warning.

        The wait method is auto; the runtime method was chosen on the first 20% of the
        trace or site history (the tuning part): the best success among the candidates whose
        coverage stays at or below 25%.
        """,
        ANSWERS,
        "predictor/core/answer_accuracy.py",
    ),
    Term(
        "told-accuracy",
        "what this site told",
        "How far off the waits a live site told were: the jobs submitted through it that have "
        "started, each against the wait it was told.",
        """
        Every job submitted through a site keeps the wait it was told when it was submitted.
        Once it starts, its real wait (submission to start) is known. Over the last 200 such
        jobs the predict page shows the average and the middle error of what they were told,
        and how many waited longer than they were told. It is read again with the queue, so
        it follows each job that starts; the "accuracy here" beside it is scored at the
        site's last refit. Until 30 such jobs have started it is not shown.
        """,
        ANSWERS,
        "holdqueue/services/told_accuracy.py",
    ),
)
