"""Filled in by its issue; see predictor/routes.py."""


def register(router) -> None:  # noqa: ANN001
    return None
