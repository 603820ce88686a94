"""Runtime evaluation runs go through ``predictor.tasks_wait.run_evaluation`` (one task for
both kinds, dispatching on ``EvaluationRun.kind`` to
``predictor.services_runtime.run_runtime_evaluation``); this module adds no task of its own."""
