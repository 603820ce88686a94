"""Request and answer shapes of the predictor's API."""
