"""Glossary entries of the accuracy measures and of the answers' parts (see
:mod:`queuecast.glossary`)."""

from __future__ import annotations

from queuecast.glossary_term import Term

WAITS = "Accuracy of wait predictions"
RUNTIMES = "Accuracy of runtime predictions"
ANSWERS = "Answers"

TERMS = (
    Term(
        "aae",
        "AAE",
        "Average absolute error: the mean of |predicted − actual|, in time.",
        """
        Average absolute error: the mean, over the test jobs, of the distance between the
        predicted and the actual value (wait, or runtime), shown as a duration. Smaller is
        better. Always answering “no wait” scores the mean wait.
        """,
        WAITS,
        "predictor/core/wait/metrics.py",
    ),
    Term(
        "aae-over-mean-wait",
        "AAE / mean wait",
        "The AAE as a share of the mean actual wait; always answering “no wait” scores 100%.",
        """
        The average absolute error divided by the mean actual wait of the same jobs. Always
        answering “no wait” (always-zero) scores exactly 100%, so a method at or above 100%
        is no better than that; pages mark it “≥ zero”.
        """,
        WAITS,
        "predictor/core/wait/metrics.py",
    ),
    Term(
        "scaled-aae",
        "scaled AAE",
        "The mean of |predicted − actual wait| / (actual wait + runtime): the error as a "
        "multiple of the job's response.",
        """
        The seed paper's scaled error: for each job |predicted wait − actual wait| divided by
        its response (actual wait + runtime, at least 1 s), averaged over the jobs. A number
        without a unit (× response): 0.5 means the wait was off by half the time the job
        spent in the system. It favours methods that are right about short jobs: even
        always-zero scores low where most jobs wait little.
        """,
        WAITS,
        "predictor/core/wait/metrics.py",
    ),
    Term(
        "correct-share",
        "correct",
        "The share of predictions within the allowed error: 1 h up to a 6 h prediction, "
        "more for longer ones.",
        """
        The share of jobs whose wait prediction was off by no more than the allowed error,
        which grows with the predicted wait: 1 h for predictions up to 6 h, 3 h up to 12 h,
        6 h up to 1 d, 12 h up to 2 d, and 1 d beyond.
        """,
        WAITS,
        "predictor/core/wait/metrics.py",
    ),
    Term(
        "vs-apq",
        "vs APQ (95%)",
        "The method's AAE minus APQ's, with a paired bootstrap 95% interval; negative: "
        "better than APQ.",
        """
        The difference between a method's AAE and APQ's on the same jobs, with its 95%
        interval from a paired bootstrap (the jobs are resampled with replacement, the same
        draw for both methods). Negative means better than APQ; an interval that contains 0
        means the two cannot be told apart on these jobs.
        """,
        WAITS,
        "predictor/core/wait/metrics.py",
    ),
    Term(
        "predictions-per-s",
        "predictions/s",
        "How many jobs the method answered per second of the evaluation, on this machine.",
        """
        Test jobs answered per second of the method's own time during the evaluation, on the
        machine that ran it (other work on the machine slows it down).
        """,
        WAITS,
    ),
    Term(
        "wait-class",
        "wait class",
        "Jobs grouped by their actual wait: under 1 min 40 s, to 16 min 40 s, to 2 h 47 min, "
        "to 1 d 4 h, and longer.",
        """
        The evaluation groups the test jobs by their actual wait, at 100 s (1 min 40 s),
        1,000 s (16 min 40 s), 10,000 s (2 h 47 min) and 100,000 s (1 d 4 h), and gives each
        method's AAE per group: a method can be good on short waits and poor on long ones.
        """,
        WAITS,
        "predictor/core/wait/metrics.py",
    ),
    Term(
        "wait-interval",
        "wait interval",
        "A range the wait falls in with the stated confidence, read off the errors of recent "
        "jobs that were predicted like this one.",
        """
        A range [low, high] that the wait should fall in with the chosen confidence (90%: 9
        jobs in 10). It is read off the recent jobs of the same trace or site whose wait is
        known: the 200 whose predicted wait was nearest this job's (on a log scale). Each of
        their errors (actual minus predicted wait) is added to this job's prediction, and the
        interval is the narrowest span of those that holds the confidence. A job predicted to
        start at once among jobs that did gets a short interval; a job predicted a long wait
        gets the spread of the long waits' errors. See "coverage (wait interval)" for how well it
        holds. Where no calibration is available, the predict page shows QBETS's 95% upper
        bound instead and says so.

        On a trace, the answer at an instant uses the evaluations' own rule there (see
        "coverage (wait interval)"), replayed over the last 2,000 jobs started by then.
        A live site learns it from the jobs it told: each job submitted through the site
        keeps the wait it was told, and once it starts its wait joins the pool, with the
        same running correction as the evaluations' (see "coverage (wait interval)"). Until
        30 of them have started, the site uses the errors of the last 200 finished jobs
        scored at its last fit, and the answer says which.

        Until stop 59 the interval was the prediction plus the narrowest span of the recent
        errors (actual minus predicted) of all the jobs: as wide for a job told a minute as
        for one told a day. It held 90% overall, but 43-65% for the jobs told over 6 hours
        and 98-99% for those told under 10 minutes, with a median width of 7 to 14 hours.
        At stop 59 it read the nearest 200 jobs' waits themselves rather than their errors:
        for a job predicted longer than most of its neighbours, their waits lay below its
        own, and its interval with them. The errors gave a 4% lower interval score (width,
        plus misses weighed by how far out they fell) on the tuning parts of KTH-SP2,
        SDSC-SP2 and CTC-SP2, and about the same on their test parts (docs/results.md,
        "Stop 60").
        """,
        WAITS,
        "predictor/core/wait/local_interval.py",
    ),
    Term(
        "p-within",
        "chance to start within",
        "The chance that the job starts within the time you give, read off recent jobs that "
        "were predicted like it.",
        """
        On a trace, at the instant you ask about: of the last 2,000 jobs that had arrived
        by then, started or still waiting, each predicted at its own arrival, the 200 whose
        predicted wait was nearest this job's (on a log scale), and their chance to start
        within the time you give, a job still waiting counted as waiting at least as long as
        it has so far (the Kaplan-Meier estimate, since stop 61; stop 58 read the share of
        the started ones, which the jobs still waiting, the long waits, made too high). On
        the shared logs' test parts, when it says 20% about 20% of the jobs start in time: its
        calibration error is 0.010-0.014 (the rule before stop 58, a shift of the method's
        recent errors, said 3% where 10-19% started). The API answers it as
        p_within when asked with within_s.

        A live site reads it off the jobs submitted through it, started or still waiting:
        the 200 whose told wait was nearest this job's, and their chance to start within the
        time you give, a job still waiting counted as waiting at least as long as it has so
        far (the Kaplan-Meier estimate, since stop 61; wait.within in its answer). The first
        jobs to start are the short waits, so the share of the started ones alone said too
        much on a new site. Until 30 such jobs have started it gives none.
        """,
        WAITS,
        "predictor/core/wait/p_within.py",
    ),
    Term(
        "interval-coverage",
        "coverage (wait interval)",
        "The share of test jobs whose actual wait fell inside their interval; calibration "
        "holds it at the stated level for every method.",
        """
        The share of test jobs whose actual wait fell inside their wait interval. It should
        equal the interval's confidence, and it does for every method: why every method shows
        80.0% at 80% is the calibration, not the methods.

        The interval is built the same way around every method's answer, from that method's
        own past answers (localised conformal prediction): for each job, of the last 2,000
        jobs whose wait was already known when it arrived, the 200 whose prediction was
        nearest this job's; each of their errors (actual minus predicted wait) is added to
        this job's prediction, and the interval is the narrowest span of those that holds
        80% of them. A running correction (adaptive conformal inference, Gibbs and Candès 2021, step
        0.002) widens the intervals a little after each miss and narrows them after each hit,
        steering the share of misses to 20%. A less accurate method therefore gets wider
        intervals, not a lower coverage: compare methods by the mean width at the same
        coverage. Because the 200 are the jobs predicted like this one, the interval holds
        for the jobs told short and for those told long alike, not only on average.

        How close to the level: after n jobs whose outcome is known, the coverage differs
        from it by the correction's total move divided by 0.002 × n. Over a whole log's test
        part (tens of thousands of jobs) that is about a tenth of a point: every method shows
        80.0% (79.9-80.1%) at 80% on the shared logs. Over 1,000 test jobs it can be a few
        points, most often below the level while the correction catches up with long waits
        that are not known yet. The first jobs, before 30 waits are known, get [0, ∞) and
        count as covered (“uncalibrated”). Results of evaluations run before stop 59 used
        the errors of all the last 1,000 jobs instead (the same coverage overall, wider
        intervals).
        """,
        WAITS,
        "predictor/core/wait/local_interval.py",
    ),
    Term(
        "mean-width",
        "mean width",
        "The average length of the wait intervals (uncalibrated ones left out); narrower is "
        "more useful at the same coverage.",
        """
        The average of high − low over the test jobs' wait intervals, leaving out the
        uncalibrated [0, ∞) ones. At the same coverage, a narrower interval tells the user
        more.
        """,
        WAITS,
        "predictor/core/wait/local_interval.py",
    ),
    Term(
        "success-rate",
        "success rate",
        "The share of test jobs whose actual runtime fell inside one of the predicted ranges.",
        """
        The share of test jobs whose actual runtime lies in one of the method's predicted
        ranges. Read it together with coverage: one range from 1 s to the requested time
        always succeeds and says nothing.
        """,
        RUNTIMES,
        "predictor/core/runtime/metrics.py",
    ),
    Term(
        "runtime-coverage",
        "coverage (runtime ranges)",
        "The ranges' summed length over the length of the baseline [shortest, longest] range; "
        "smaller is more informative.",
        """
        The summed length of the predicted ranges divided by the length of the baseline
        range (from the shortest to the longest past runtime of the job's history level),
        summed over the test jobs. The baseline scores 100%; 10% means the ranges pin the
        runtime down ten times more tightly. Not to be confused with the coverage of a wait
        interval.
        """,
        RUNTIMES,
        "predictor/core/runtime/metrics.py",
    ),
    Term(
        "median-coverage",
        "median coverage",
        "The median over jobs of each job's ranges' length over its baseline range's length.",
        """
        Each job's summed range length over its baseline range's length, and the median of
        that over the test jobs (coverage sums the lengths first, so long jobs weigh more
        there).
        """,
        RUNTIMES,
        "predictor/core/runtime/metrics.py",
    ),
    Term(
        "mean-pct-error",
        "mean % error",
        "The mean of |point − actual| / actual runtime.",
        """
        The mean over test jobs of the point prediction's error relative to the actual
        runtime. Very short jobs make it large: a 1 s job predicted at 1 min is 5,900% off.
        """,
        RUNTIMES,
        "predictor/core/runtime/metrics.py",
    ),
    Term(
        "median-runtime",
        "median runtime",
        "The middle of the rangeSet: the runtime the job has finished by with a 50% chance, "
        "if it falls in one of the ranges.",
        """
        Where P(finished by t) reaches half of the ranges' total probability, spreading each
        range's probability evenly over it: the time by which the job has finished with a 50%
        chance if its runtime falls in one of the ranges (the ranges' total is that chance;
        when it is 100%, simply the median runtime). It always lies inside
        a range, so the chart and the answer agree; the predict page's “Predicted finish” is
        the predicted start plus this runtime. The API also gives point_s, the rangeSet's own
        point (each range's middle weighted by its probability); with ranges far apart that
        mean can fall between them, where the runtime is not expected.
        """,
        ANSWERS,
        "predictor/pages/rangeset.py",
    ),
    Term(
        "p-finished",
        "P(finished by t)",
        "The chance that the job has finished t after it started within the ranges: the "
        "probabilities of the ranges up to t added.",
        """
        The probabilities of the ranges that end by t, plus the share of the range t falls in
        (spread evenly over it): the chance that the runtime is at most t and in one of the
        ranges. It rises inside ranges and stays flat between them, and ends at the ranges'
        total probability, which is under 100% when the runtime may fall outside every range
        (the rangeSet's calibrated probabilities); the job itself always ends by its time
        limit.
        """,
        ANSWERS,
    ),
    Term(
        "confidence",
        "confidence",
        "How often a wait interval should hold: 90% means 9 jobs in 10 start within it.",
        """
        The chance the wait interval is meant to hold at: with 90%, the actual wait should fall
        inside it for 9 jobs in 10 (see coverage).
        """,
        ANSWERS,
    ),
    Term(
        "runtime-level",
        "runtime level",
        "Whose history answered the runtime: tuple, else user, else size, else all jobs.",
        """
        Which history the runtime answer comes from: tuple (the same user, processors, queue
        and group), else user (the same user), else size (the same number of processors),
        else all (every finished job), or none (no finished job at all). The number next to
        it is the count of history jobs behind the answer.
        """,
        ANSWERS,
        "predictor/core/runtime/rangeset.py",
    ),
    Term(
        "tuple",
        "tuple",
        "Jobs with the same user, number of processors, queue and group.",
        """
        Jobs that share user, requested processors, queue and group. The seed paper treats
        them as runs of the same program; their past runtimes answer first.
        """,
        ANSWERS,
    ),
    Term(
        "support",
        "history jobs",
        "How many past jobs the answer was computed from.",
        """
        The number of past jobs behind an answer: APQ's neighbours, or the runtime level's
        history jobs. An answer from a handful of jobs deserves less trust.
        """,
        ANSWERS,
    ),
    Term(
        "recent-accuracy",
        "recent accuracy",
        "How far off the service's predictions were on the site's last finished jobs, each "
        "predicted from what was known at its arrival.",
        """
        For a live site: the service predicts each of the last finished jobs of the site's
        history from what was known at its arrival, and compares with what happened: the mean
        and median wait error and the mean runtime error. For a stored trace: the latest
        evaluation run of it.
        """,
        ANSWERS,
        "holdqueue/services/predict.py",
    ),
)
