"""The predictor's REST API: wait and runtime predictions, evaluation runs."""
