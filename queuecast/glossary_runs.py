"""Glossary entries of the simulator, molding and delayed submission, and the data (see
:mod:`queuecast.glossary`)."""

from __future__ import annotations

from queuecast.glossary_term import Term

SIM = "Simulator and replays"
MOLD = "Molding and delayed submission"
DATA = "Data"

TERMS = (
    Term(
        "easy",
        "EASY backfilling",
        "First come, first served, but later jobs may start early when they do not delay "
        "the first waiting job.",
        """
        The scheduling rule of most batch systems. Jobs start in arrival order while they
        fit. When the first waiting job does not fit, it gets a reservation at the earliest
        time enough processors are expected to be free (by the running jobs' estimates);
        later jobs may then start at once if they fit now and either end (by their estimate)
        before that reservation or use only processors the reserved job will not need.
        """,
        SIM,
        "pyss_adapter/core/easy.py",
    ),
    Term(
        "fcfs",
        "FCFS",
        "First come, first served: jobs start strictly in arrival order.",
        """
        First come, first served: a job starts only when every job that arrived before it
        has started and enough processors are free.
        """,
        SIM,
        "pyss_adapter/core/fcfs.py",
    ),
    Term(
        "conservative",
        "conservative backfilling",
        "Every waiting job gets a reservation; a later job may start early only if it "
        "delays none of them.",
        """
        Like EASY backfilling, but every waiting job, not only the first, holds a reservation,
        and a job may jump ahead only when it delays none of them.
        """,
        SIM,
        "pyss_adapter/core/conservative.py",
    ),
    Term(
        "estimates",
        "runtime estimates",
        "What the scheduler believes a job will run for when it makes reservations: the "
        "requested time, or Tsafrir's prediction.",
        """
        The runtime the simulated scheduler assumes when it plans reservations (the job
        still runs for its real runtime): requested (the user's time limit) or tsafrir (the
        mean of the user's last two runtimes, capped by the time limit).
        """,
        SIM,
        "pyss_adapter/core/estimates.py",
    ),
    Term(
        "wait",
        "wait",
        "Time from the job's arrival (submission, or the user's submission when Queuecast "
        "held it) to its start.",
        """
        The time between a job's arrival and its start. In molding and delay runs it counts
        from the user's original submission, so time spent in Queuecast's hold queue is part
        of the wait.
        """,
        SIM,
    ),
    Term(
        "response",
        "response",
        "Wait plus runtime: from arrival to the end of the job.",
        """
        The time from a job's arrival to its end: wait + runtime. What a user feels.
        """,
        SIM,
    ),
    Term(
        "slowdown",
        "slowdown",
        "Response over runtime (× runtime); 1 means the job did not wait.",
        """
        A job's response divided by its runtime, a number without a unit: 1 means it started
        at once, 3 that it spent twice its runtime waiting. Left out for 0-second jobs.
        """,
        SIM,
        "pyss_adapter/core/stats.py",
    ),
    Term(
        "bounded-slowdown",
        "bounded slowdown",
        "max(1, response / max(runtime, 10 s)): slowdown that very short jobs cannot blow up.",
        """
        max(1, response / max(runtime, 10 s)), averaged over the jobs: the slowdown, with
        runtimes under 10 s counted as 10 s so that a 1-second job waiting a minute does not
        dominate the mean. A number without a unit; 1 is the best.
        """,
        SIM,
        "pyss_adapter/core/stats.py",
    ),
    Term(
        "utilisation",
        "utilisation",
        "The share of the machine's processor-time that jobs kept busy.",
        """
        Busy processor-time over the machine's processors × the time span. In molding runs
        the span runs from the first evaluated arrival to the last evaluated job's end.
        """,
        SIM,
        "pyss_adapter/core/stats.py",
    ),
    Term(
        "offered-load",
        "offered load",
        "The work submitted in a period (processors × runtime) over the machine's capacity "
        "for that period.",
        """
        For each period of the trace: the work of the jobs submitted in it (processors ×
        runtime) over the machine's processors × the period. 100% means that period's
        submissions alone would fill the machine; above that, a queue must build up.
        """,
        SIM,
        "traces/core/dashboard.py",
    ),
    Term(
        "cpu-hours-class",
        "CPU-hours class",
        "Jobs grouped by processors × runtime: under 1 CPU-hour, 1-10, 10-100, 100-1000 and "
        "1000 or more.",
        """
        Jobs grouped by their work, processors × runtime in hours, at 1, 10, 100 and 1,000
        CPU-hours. Molding runs classify each job by its original request (the log's size and
        runtime), so a job stays in the same class under every strategy; a replay's page
        classifies the jobs as they ran.
        """,
        SIM,
        "pyss_adapter/core/stats.py",
    ),
    Term(
        "tuning-part",
        "tuning part",
        "The first share of a trace (20% by default), used only to choose settings and warm "
        "the methods up; results are over the jobs after it.",
        """
        The first part of a trace in arrival order (20% of the jobs by default). Methods
        choose their settings there and nowhere else; the accuracy figures are over the test
        jobs after it, each predicted from what was known at its arrival. Molding runs call
        it the warm-up: its jobs are submitted unchanged under every strategy.
        """,
        SIM,
    ),
    Term(
        "molding",
        "molding",
        "Choosing the number of processors for a job: the size whose predicted response "
        "scores best among the sizes tried.",
        """
        Before a job goes to the batch system, Queuecast predicts its wait and runtime at
        each candidate size as if it arrived now and picks the size whose response scores
        best (see score). Fewer processors may start much sooner and still finish first.
        """,
        MOLD,
        "jobmolding/core/choice.py",
    ),
    Term(
        "candidates",
        "size candidates",
        "The sizes tried for a job: those its user's jobs ran or wait at, plus the size asked "
        "for; a newcomer gets a grid of sizes around it.",
        """
        The processor counts molding compares: the sizes the job's user used before (the
        seed paper's rule: the user's finished, running and waiting jobs, each at the size it
        went to the batch system) plus the size asked for. A user with no such job gets the
        powers of two within 4 times the asked size either way, plus half and double the
        asked size, so choosing the size can choose. A live site and a molding run use the
        same rule (under the paper model a run keeps the seed's: sizes with a finished
        runtime, no grid); the run reports which sizes were tried and how often.
        """,
        MOLD,
        "jobmolding/core/candidates.py",
    ),
    Term(
        "score",
        "score",
        "The seed's gain function of a response rangeSet: higher for short and certain "
        "responses; the highest wins.",
        """
        Each candidate's response rangeSet (its runtime ranges shifted by its predicted wait)
        is scored with the gain f(t) = 1 − t of the response t normalised by the longest
        response among the candidates, averaged over the ranges by probability and divided by
        their total length. Short, narrow responses score highest. A number between 0 and 1
        without a unit.
        """,
        MOLD,
        "jobmolding/core/score.py",
    ),
    Term(
        "delayed-submission",
        "delayed submission",
        "Holding a job back until running jobs are predicted to end, when that is predicted "
        "to finish it sooner.",
        """
        Queuecast may hold a job and submit it later: at the predicted end of the running
        jobs (the first predicted end, moved on to any other end within 5% of the time until
        it), with the size chosen again for the load predicted then. It holds only when the
        hold plus the later response beats submitting now by more than the threshold (30%).
        """,
        MOLD,
        "jobmolding/core/delay.py",
    ),
    Term(
        "delay-threshold",
        "30% rule",
        "Hold a job only when hold + later response is more than 30% shorter than the "
        "response if submitted now.",
        """
        Hold when (hold + predicted response if submitted then) < 70% of the predicted
        response if submitted now. The 30% margin absorbs prediction errors and jobs that
        arrive meanwhile.
        """,
        MOLD,
        "jobmolding/core/delay.py",
    ),
    Term(
        "hold-queue",
        "hold queue",
        "Jobs held back: by Queuecast, or at their owner's request; jobs arriving during a "
        "hold Queuecast made queue behind it and keep their spacing.",
        """
        A job Queuecast holds heads the hold queue until its release time. Jobs that arrive
        while it is held queue behind it, first come first served, and are released after it
        keeping the spacing they had at arrival. A job arriving after the release is judged
        afresh. A job whose owner asked it to start no earlier than a time waits here too,
        until that time, and heads no hold: nobody queues behind it.
        """,
        MOLD,
        "jobmolding/core/hold.py",
    ),
    Term(
        "strategy",
        "strategy",
        "baseline (the log's jobs as asked), molding (sizes chosen) or delay (sizes chosen "
        "and holds allowed).",
        """
        A molding run replays the same jobs three ways with EASY backfilling: baseline (every
        job as its user asked), molding (each job's size chosen at its arrival) and delay
        (molding plus delayed submission).
        """,
        MOLD,
        "jobmolding/core/policy.py",
    ),
    Term(
        "paper-model",
        "paper (runtime model)",
        "A molded job's runtime drawn from its user's past runtimes at the new size; its "
        "time limit from the user's past limits.",
        """
        How a molding run guesses what a job would have done at another size, as the seed
        paper does: its runtime is drawn at random among its user's past runtimes at that
        size (never beyond its time limit). A smaller size takes as time limit the smaller of
        the user's largest earlier limit at that size and the machine's limit that exceeds
        the original limit (else the original); a larger size keeps the original limit.
        """,
        MOLD,
        "jobmolding/core/runtime_models.py",
    ),
    Term(
        "downey-model",
        "downey (runtime model)",
        "A molded job's runtime scaled by Downey's speedup model (parallelism and its variance σ).",
        """
        How a molding run guesses what a job would have done at another size with Downey's
        speedup model (1997): runtime(n) = runtime(n0) × speedup(n0) / speedup(n), where the
        speedup follows from the job's average parallelism (its asked size n0) and the
        variance of its parallelism σ (the run's sigma). The time limit scales the same way,
        capped at the machine's limit.
        """,
        MOLD,
        "jobmolding/core/runtime_models.py",
    ),
    Term(
        "molded-share",
        "molded",
        "The share of evaluated jobs that ran at another size than asked.",
        """
        The share of evaluated jobs whose size differs from the one their user asked for.
        """,
        MOLD,
        "jobmolding/core/metrics.py",
    ),
    Term(
        "delayed-share",
        "delayed",
        "The share of evaluated jobs Queuecast held back before submitting them.",
        """
        The share of evaluated jobs that were held (as the head of a hold or behind one).
        """,
        MOLD,
        "jobmolding/core/metrics.py",
    ),
    Term(
        "mean-hold",
        "mean hold",
        "The average time a job spent held by Queuecast, over all evaluated jobs.",
        """
        The average hold, over all evaluated jobs (jobs never held count as 0 s).
        """,
        MOLD,
        "jobmolding/core/metrics.py",
    ),
    Term(
        "work-ratio",
        "work ratio",
        "CPU work as run over the log's work (processors × runtime); 1.0 means unchanged.",
        """
        The evaluated jobs' processors × runtime as they ran, over the same jobs'
        processors × runtime in the log. Above 1.0 the runtime model made the jobs cost more
        machine time than they did; below 1.0, less (a molding gain that comes from shrunken
        work is not a scheduling gain).
        """,
        MOLD,
        "jobmolding/core/metrics.py",
    ),
    Term(
        "swf",
        "SWF",
        "Standard Workload Format: the Parallel Workloads Archive's job log format, one line "
        "of 18 numbers per job.",
        """
        The Standard Workload Format of the Parallel Workloads Archive: header lines starting
        with “;” (the machine's size, its start time, ...) and one line of 18 numbers per job
        (submit time, wait, runtime, processors, requested time, user, queue, ...); -1 means
        unknown.
        """,
        DATA,
        "traces/core/swf.py",
    ),
    Term(
        "trace",
        "trace",
        "A machine's job log (SWF) stored in Queuecast; predictions on it are for an instant "
        "of its past.",
        """
        A machine's job log stored in Queuecast. Predicting on a trace answers for a job
        submitted at an instant of the log, from what was known then.
        """,
        DATA,
    ),
    Term(
        "site",
        "site",
        "A batch system Queuecast fronts (Slurm, or the simulated demo cluster): jobs "
        "submitted there are molded, held and released for real.",
        """
        A live batch system behind Queuecast: a real Slurm, or the built-in simulated cluster
        that replays a trace against the clock. Its predictions are for submitting now.
        """,
        DATA,
        "holdqueue/core/backends/base.py",
    ),
    Term(
        "lenient",
        "lenient",
        "Ingest option: skip malformed lines and report them, instead of rejecting the file.",
        """
        When set on an upload, lines that cannot be read (a wrong number of fields, a
        non-number, a duplicate job number) are skipped and listed in the ingest report with
        their line, field and value. Without it, the first such line rejects the whole file
        and nothing is stored.
        """,
        DATA,
        "traces/core/swf.py",
    ),
)
