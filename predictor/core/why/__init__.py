"""Why a job waits and what single change would start it sooner (issue 20).

``queue``: the queue a request joins (running and queued jobs, their estimates);
``forward``: EASY simulated forward from that queue (the replay engine's own EASY);
``explain``: the jobs ahead and what the request waits for; ``sooner``: the smallest single
change (fewer processors, a shorter time limit, a later submission) and its effect.
"""
