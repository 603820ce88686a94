"""Replays of traces in a PySS-compatible simulator (issue 5, spec ``simulator.md``).

PySS names stay inside this package; this table maps them to ours.

=====================================  ==========================================
PySS                                   Queuecast
=====================================  ==========================================
``Job.id`` (SWF field 1)               ``job_id``
``Job.submit_time``                    ``submit_s``
``Job.actual_run_time``                ``runtime_s``
``Job.user_estimated_run_time``        ``estimate_s`` (requested time, converted)
``Job.predicted_run_time``             the estimate source's value (``Engine.est``)
``Job.num_required_processors``        ``n_procs``
``Job.start_to_run_at_time``           ``ReplayResult.start_s``
``Job.finish_time``                    ``ReplayResult.end_s``
``--num-processors``                   ``machine_procs`` / ``--processors``
``_job_input_to_job``                  ``core.jobs.sim_jobs(mode="pyss")``
``JobSubmissionEvent`` (order 0)       ``engine.SUBMIT``
``JobTerminationEvent`` (order 1)      ``engine.TERMINATE``
``JobStartEvent`` (order 2)            ``Engine.start`` inside the pass
``CpuSnapshot``                        ``Engine.running`` + ``Engine.free``
``EasyBackfillScheduler``              ``core.easy.EasyScheduler``
``FcfsScheduler``                      ``core.fcfs.FcfsScheduler``
``ConservativeScheduler``              ``core.conservative.ConservativeScheduler``
``print_statistics``                   ``core.stats.pyss_view``
``time_of_last_job_submission``        ``jobs.submit_s.max()``
``--output-swf`` per-job file          ``core.pyss_io.read_pyss_output``
=====================================  ==========================================

Layout: ``core/`` is plain Python (engine, schedulers, estimates, statistics,
PySS interop, simulated start-time estimates, the submit hook ``core/policy.py``
that molding and delayed submission plug into, and ``core/snapshot.py``, the
predictor's view of a running replay); ``services.py`` glues it to the
database; ``views.py``/``tasks.py`` serve replays; the ``replay`` and
``export_pyss`` commands run it from the shell.
"""
