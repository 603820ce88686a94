"""The predictor's glue to ``predictor.core``: predictions, evaluation runs."""
