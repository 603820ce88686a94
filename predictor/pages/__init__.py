"""The predictor's browser pages: the predict page, the runs pages, the rangeSet."""
