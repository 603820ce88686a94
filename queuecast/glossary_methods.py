"""Glossary entries of the prediction methods (see :mod:`queuecast.glossary`)."""

from __future__ import annotations

from queuecast.glossary_term import Term

WAIT = "Queue-wait methods"
RUNTIME = "Runtime methods"

TERMS = (
    Term(
        "apq",
        "APQ",
        "Adaptive Prediction of Queue waits, the seed paper's method: the waits of past jobs "
        "that arrived to a similar queue state.",
        """
        Adaptive Prediction of Queue waits, the wait method of the paper Queuecast builds on.
        For a job arriving at time t it takes the most recent jobs of the same queue whose
        wait was already known at t, measures how alike the system was at their arrival and
        at t (counts, sizes, requested times and waiting times of the waiting and running
        jobs, as summaries or as histograms), and predicts from the nearest ones.

        When the nearest jobs form a tight cluster, a standard-deviation minimiser answers;
        otherwise either a regression (a weighted average of the k nearest waits where the
        regression is unusable) or a weighted median of the k nearest waits: which of the
        two, and k, are chosen on the tuning part. With too little history it answers the
        median wait. The answer names the inner predictor that answered (see "APQ
        predictor").
        """,
        WAIT,
        "predictor/core/wait/apq.py",
        ("wait:apq",),
    ),
    Term(
        "apq-predictor",
        "APQ predictor",
        "Which of APQ's inner predictors answered: stddev, regression, weighted_avg, "
        "weighted_median or fallback_median.",
        """
        APQ answers with one of its inner predictors, and the answer says which:
        stddev (the standard-deviation minimiser, used when the nearest past jobs form a tight
        cluster), regression, weighted_avg (weighted average of the k nearest waits),
        weighted_median (weighted median of the k nearest waits) or fallback_median (the
        median wait, when the queue has too little known history).
        """,
        WAIT,
        "predictor/core/wait/apq_predictors.py",
    ),
    Term(
        "qbets",
        "QBETS",
        "Binomial quantile bounds on the waits of the same size group (Nurmi, Brevik and "
        "Wolski 2007): the median as the answer, a 95% bound as its upper limit.",
        """
        Queue Bounds Estimation from Time Series (Nurmi, Brevik and Wolski, 2007). Jobs are
        grouped by requested processors (1-4, 5-16, 17-64, 65 and more); each group keeps
        the waits known so far. The answer is their median; the upper bound is the wait that
        at least 95% of jobs stay under, with 95% confidence (a binomial bound on the 0.95
        quantile). A group with too few waits borrows all sizes' history. After a run of
        misses too long to be chance, the group forgets its older history, so the bound
        follows a changed queue.
        """,
        WAIT,
        "predictor/core/wait/qbets.py",
        ("wait:qbets",),
    ),
    Term(
        "ibl",
        "IBL",
        "Instance-based learning (Li, Groep and Wolters): a kernel-weighted average of the "
        "waits of the most similar past jobs.",
        """
        Instance-based learning of queue waits (Li, Groep and Wolters, 2004-2005). Each past
        job is a point described by its user, group, queue, executable, processors, requested
        time, time of day and the state of the queue at its arrival. The prediction is the
        Gaussian-kernel-weighted average wait of the k nearest past jobs whose wait was known;
        the attribute weights, k and the kernel width are tuned by random search on the
        tuning part.
        """,
        WAIT,
        "predictor/core/wait/ibl.py",
        ("wait:ibl",),
    ),
    Term(
        "gbm",
        "GBM",
        "Gradient-boosted regression trees on the system state at the job's arrival.",
        """
        Gradient boosting (scikit-learn's HistGradientBoostingRegressor, absolute-error loss)
        on the system state at the job's arrival: the queue and running-job summaries,
        counts, the means of the six state distributions, the time of day and the histograms.
        It is trained only on jobs whose wait was known, and retrained at fixed row blocks as
        the evaluation walks forward.
        """,
        WAIT,
        "predictor/core/wait/gbm.py",
        ("wait:gbm",),
    ),
    Term(
        "recent-median",
        "median (recent median)",
        "The median wait of the most recent jobs of the same size class that had started.",
        """
        The median wait of the most recent jobs of the job's size class (1-4, 5-16, 17-64,
        65 and more processors) that had started by its arrival; all sizes when the class
        has none yet, 0 s when nothing is known.
        """,
        WAIT,
        "predictor/core/wait/baselines.py",
        ("wait:median",),
    ),
    Term(
        "always-zero",
        "always-zero (zero)",
        "Always answers “no wait”: its average error is the mean wait, the floor every "
        "method has to beat.",
        """
        The method named zero answers 0 s for every job. Its average absolute error is the
        mean actual wait, so a method whose AAE is not below the mean wait tells a user less
        than saying “no wait” would. Pages mark such a method “≥ zero” and warn under its
        answers.
        """,
        WAIT,
        "predictor/core/wait/baselines.py",
        ("wait:zero",),
    ),
    Term(
        "sim",
        "sim (simulated start)",
        "What Slurm's squeue --start does: run the queue forward with EASY backfilling, "
        "every job using its whole requested time.",
        """
        Simulates the queue forward from the state at the job's arrival with EASY
        backfilling, every running and waiting job taking its full requested time; the
        predicted wait is when the job starts in that simulation. This is what a batch system
        answers on its own (Slurm's squeue --start); nothing is learned.
        """,
        WAIT,
        "predictor/core/wait/sim.py",
        ("wait:sim",),
    ),
    Term(
        "auto",
        "auto",
        "Weighs the wait methods online by their errors on this site's jobs that have "
        "started, and never answers worse than always-zero has been doing lately.",
        """
        Weighs apq, ibl, gbm, qbets, median and zero. Every candidate predicts the site's
        jobs as they arrive; once a job starts its wait is known, and every 25 started jobs
        the weights move towards the candidates with the lowest error (AdaHedge, which needs
        no setting). A second way of weighing also counts the candidates' best mix as one
        more candidate; each site keeps whichever of the two erred less on its own tuning
        part (the answer's methods note says which). The answer is the weighted mean, never
        above the longest wait seen so far. A job whose state lies beyond anything seen in
        the tuning part (its user's or its queue's waiting jobs) gets the fallback: the
        weighted mean or any one candidate, whichever erred least on such jobs lately. When
        these answers have recently erred more than answering 0 would have, the answer is 0.
        On a stored trace, jobs still waiting count too, at the worst case of how long they
        may yet wait: the weighted answers are kept only if they cannot have done worse than
        0 however those waits turn out, and a candidate whose answers those jobs have
        already outwaited loses weight at once. A live site's history holds finished jobs
        only, so there only the started ones count.
        """,
        WAIT,
        "predictor/core/wait/auto.py",
        ("wait:auto",),
    ),
    Term(
        "rangeset",
        "rangeSet",
        "A set of disjoint runtime ranges, each with a probability; the seed paper's runtime "
        "answer (the method named rangeset).",
        """
        A runtime answer as disjoint ranges of time, each with the probability that the
        runtime falls in it. Every runtime method answers with one; the method named rangeset
        is the seed paper's. The service states calibrated probabilities: a range given 60%
        has held the runtime about 60% of the time on the method's recent answers, so one
        answer's probabilities add up to the chance that the runtime falls in one of its
        ranges, at most 100%; the rest is the chance that it falls in none of them (it still
        ends by the time limit).

        That method takes the relevant history of the job's tuple (same user, processors,
        queue and group; when the tuple has none, the user's jobs, then jobs of the same
        size, then all jobs: the answer's "level"), moves each past runtime to the load
        predicted for the job through the tuple's load functions, makes each a range around
        it whose upper end is 1.2 times its lower end, merges overlapping ranges, gives each
        range the share of past runtimes inside it, keeps the 25 most likely and clips them to
        [1 s, requested time]. Its point answer is the sum of each range's probability times
        its middle.
        """,
        RUNTIME,
        "predictor/core/runtime/rangeset.py",
        ("runtime:rangeset",),
    ),
    Term(
        "density",
        "density",
        "The ranges where a runtime density built from past runtimes is highest, at one level "
        "chosen for success at no more than 25% coverage.",
        """
        Builds a density of the job's runtime from its relevant past runtimes (the seed's
        ranges around each, weighted by recency), from the same jobs' used share of their
        requested time times this job's requested time, and from the quantile method's answer,
        mixed with the weights under which the tuning part's runtimes are most likely.
        Its ranges may reach a little past the requested time: by the median time the
        site's jobs ran past their limit before being stopped, learned on the tuning part.
        The rangeSet keeps the stretches of time where the density is at least one level,
        the same for every job, chosen on the tuning part for the highest success rate at a
        coverage of at most 25%.
        """,
        RUNTIME,
        "predictor/core/runtime/density.py",
        ("runtime:density",),
    ),
    Term(
        "auto-runtime",
        "auto (runtime)",
        "The runtime method this site's tuning part chose: the best success rate at no more "
        "than 25% coverage.",
        """
        Tries density, rangeset and quantile on the site's tuning part: each learns from its
        first half and answers the jobs of its second half, each at its own arrival. The one
        with the highest success rate at a coverage of at most 25% answers from then on
        (the one of lowest coverage if none stays under 25%); the answer names it.
        """,
        RUNTIME,
        "predictor/core/runtime/choose.py",
        ("runtime:auto",),
    ),
    Term(
        "baseline-range",
        "baseline (runtime range)",
        "[shortest, longest] runtime of the job's history level; the range coverage is "
        "measured against.",
        """
        One range from the shortest to the longest runtime among the jobs of the job's
        history level (tuple, else user, else size) that ended before it; its point is their
        mean. It is the reference of coverage: a method's coverage is its ranges' length over
        this range's length.
        """,
        RUNTIME,
        "predictor/core/runtime/peers.py",
        ("runtime:baseline",),
    ),
    Term(
        "smith",
        "smith (templates)",
        "Smith, Foster and Taylor's templates: the mean runtime of past jobs alike in the "
        "attributes of the best template.",
        """
        A template is a set of job attributes (user, group, queue, executable, size range,
        requested-time range); the jobs that share the job's values form its category. The
        category with the narrowest 90% confidence interval of its mean answers that mean.
        The template set is chosen greedily on the tuning part. Point methods like this one
        get a range as wide as their own average error on the job's history level, centred
        on the point.
        """,
        RUNTIME,
        "predictor/core/runtime/smith.py",
        ("runtime:smith",),
    ),
    Term(
        "li",
        "li (nearest jobs)",
        "Li, Groep and Wolters: the distance-weighted mean runtime of the k most similar "
        "finished jobs.",
        """
        The k nearest finished jobs under a distance over user, group, queue, executable, size
        and requested time; the inverse-distance-weighted mean of their runtimes, capped by
        the requested time. Its range is as wide as its average error on the job's history
        level, centred on the point.
        """,
        RUNTIME,
        "predictor/core/runtime/li.py",
        ("runtime:li",),
    ),
    Term(
        "tsafrir",
        "tsafrir",
        "Tsafrir, Etsion and Feitelson: the mean of the user's last two runtimes, capped by "
        "the requested time.",
        """
        The mean of the user's last two runtimes that ended before the job arrived, capped by
        its requested time; the requested time when the user has no finished job. As a
        runtime method its range is as wide as its average error on the job's history level.
        As replay estimates it replaces each job's requested time for the scheduler's
        reservations.
        """,
        RUNTIME,
        "predictor/core/runtime/peers.py",
        ("runtime:tsafrir",),
    ),
    Term(
        "requested-time",
        "requested (time)",
        "The time limit the user asked for, taken as the runtime.",
        """
        The time limit the user asked for (the past mean runtime where the log has none),
        taken as the runtime prediction; what a scheduler assumes. As replay estimates:
        reservations use the requested times.
        """,
        RUNTIME,
        "predictor/core/runtime/peers.py",
        ("runtime:requested",),
    ),
    Term(
        "quantile",
        "quantile",
        "Gradient boosting with quantile loss: the range from its 10% to its 90% runtime quantile.",
        """
        Gradient-boosted trees with quantile loss on the logarithm of the runtime, from the
        request (user, group, queue, size, requested time), the user's last runtimes, the
        predicted load and the time of day. The range is [10% quantile, 90% quantile], the
        point the 50% quantile. Retrained at fixed row blocks on the most recently ended
        jobs.
        """,
        RUNTIME,
        "predictor/core/runtime/quantile.py",
        ("runtime:quantile",),
    ),
    Term(
        "load-function",
        "load function",
        "How a tuple's runtime grows with the machine's load, a line fitted on the tuning part.",
        """
        For the most frequent tuples (same user, size, queue and group) of the tuning part,
        a line runtime = slope × load + intercept fitted to their runtimes at increasing
        load. The load is the busy share of the machine; the load predicted for a job is the
        mean load of the week before its arrival.
        """,
        RUNTIME,
        "predictor/core/runtime/load_functions.py",
    ),
)
