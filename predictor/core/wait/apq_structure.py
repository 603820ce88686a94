"""APQ structure check: DBSCAN on the nearest history jobs (docs/apq.md, "History and structure").

The nearest ``1% + 1`` history jobs are points ``(D_j, wait_j)`` under the metric
``|wait_a - wait_b| / wait_range + |D_a - D_b|`` (wait_range over those points). DBSCAN
(eps 0.04, min_samples 2) labels noise points as outliers. The structure is *good* when
there are no outliers and the mean D of the points is below 0.3, or when the mean D is at
most 0.2 and the outliers are fewer than 0.3 x the mean cluster size.

With ``min_samples == 2`` DBSCAN reduces to connected components of the eps-graph: a point
with one neighbour is a core point, so every non-isolated point is core and every cluster is
a connected component; isolated points are noise. We compute that directly (about 40
points, once per prediction, where scikit-learn's DBSCAN costs ~1 ms of overhead) and fall
back to ``sklearn.cluster.DBSCAN`` for other ``min_samples``; a test checks both agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.cluster import DBSCAN


@dataclass
class Structure:
    """Clusters of the nearest points: ``labels`` (-1 = outlier), and the verdict."""

    labels: np.ndarray
    good: bool
    mean_d: float
    n_outliers: int
    mean_cluster_size: float


def point_metric(d: np.ndarray, wait: np.ndarray) -> np.ndarray:
    """(p, p) pairwise ``|wait_a - wait_b| / wait_range + |D_a - D_b|``."""
    span = wait.max() - wait.min() if len(wait) else 0.0
    dw = np.abs(wait[:, None] - wait[None, :]) / span if span > 0 else 0.0
    return dw + np.abs(d[:, None] - d[None, :])


def cluster_labels(metric: np.ndarray, eps: float, min_samples: int) -> np.ndarray:
    """DBSCAN labels on a precomputed metric (-1 = noise)."""
    if min_samples != 2:
        model = DBSCAN(eps=eps, min_samples=min_samples, metric="precomputed")
        return model.fit_predict(metric)
    adjacency = metric <= eps
    np.fill_diagonal(adjacency, True)
    # Connected components by min-label propagation: a few passes over a ~40 x 40 matrix.
    labels = np.arange(len(metric))
    while True:
        spread = np.where(adjacency, labels[None, :], len(metric)).min(axis=1)
        if np.array_equal(spread, labels):
            break
        labels = spread[spread]
    isolated = adjacency.sum(axis=1) == 1
    kept, dense = np.unique(labels[~isolated], return_inverse=True)
    out = np.full(len(metric), -1)
    out[~isolated] = dense
    return out


def check_structure(
    d: np.ndarray,
    wait: np.ndarray,
    eps: float,
    min_samples: int,
    no_outlier_mean_d: float,
    good_mean_d: float,
    outlier_ratio: float,
) -> Structure:
    """Cluster the points ``(d, wait)`` and judge the structure (spec rule, module doc)."""
    labels = cluster_labels(point_metric(d, wait), eps, min_samples)
    n_out = int(np.sum(labels < 0))
    sizes = np.bincount(labels[labels >= 0]) if np.any(labels >= 0) else np.zeros(0)
    mean_size = float(sizes.mean()) if len(sizes) else 0.0
    mean_d = float(d.mean()) if len(d) else 1.0
    good = (n_out == 0 and mean_d < no_outlier_mean_d) or (
        mean_d <= good_mean_d and n_out < outlier_ratio * mean_size
    )
    return Structure(labels, bool(good), mean_d, n_out, mean_size)
