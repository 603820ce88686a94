"""Job molding (seed "End-to-End Predictions-Based Resource Management Framework for
Supercomputer Jobs", Section IV-A): choose the request size whose predicted response-time
rangeSet scores best.

Modules: ``candidates`` (which sizes), ``score`` (the gain-function score of a rangeSet),
``choice`` (the decision and why), ``runtime_models`` (a molded job's runtime in a replay:
``paper`` and ``downey``), ``user_history`` (what a replay knows about each user's sizes).
"""
