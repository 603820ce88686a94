"""A fitted ``HistGradientBoostingRegressor`` evaluated in numpy for a few rows at a time.

A prediction for one arrival calls scikit-learn's ``predict`` on one row per model: the GBM
wait expert once, the quantile runtime method three times. Each call validates the input,
sets up OpenMP and walks every tree in Cython: about 0.5 CPU-ms for 100 trees and one row,
of which the walk is a small part (docs/results.md, "Speed", fifth round). Here the trees are
flattened once into arrays and all trees are walked together, one numpy step per tree level:

    node <- left[node] if (x[feature[node]] <= threshold[node]        (x not NaN)
                           or missing_go_to_left[node])               (x NaN)
            else right[node],            until every node is a leaf
                                         (a leaf's children are itself);
    y = ((baseline + value[leaf_1]) + value[leaf_2]) + ...           (trees in fit order)

which is scikit-learn's own rule (``_predict_one_from_raw_data``) and its own summation
order, so the answer is the same float, bit for bit (tested). Only numeric splits and an
identity link (the quantile and absolute-error losses) are compiled; any other model is
answered by scikit-learn. Many rows at once are faster in scikit-learn's compiled walk, so
:func:`predict` hands batches above :data:`SMALL_BATCH` rows to it. :func:`predict_all` walks
several models' trees as one forest (the quantile method's three models in one walk).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from predictor.core.threads import threads

SMALL_BATCH = 32  # rows; above this scikit-learn's Cython walk is faster


@dataclass(frozen=True)
class FlatTrees:
    """Every tree's nodes in one array (child indices made global); ``roots`` per tree."""

    roots: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    missing_left: np.ndarray
    leaf: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    baseline: float

    def walk(self, x: np.ndarray) -> np.ndarray:
        """The leaf value each row of ``x`` reaches in each tree, (rows, trees).

        Each level reads every (row, tree)'s next node from :attr:`child` at ``2 node +
        right``, a leaf's two children being itself, so no node needs a mask; the walk stops
        once every one is a leaf. ``right`` is ``not x <= threshold`` (true for a NaN), and
        only when ``x`` holds a NaN is it corrected by the node's ``missing_left``."""
        x = np.asarray(x, dtype=np.float64)
        flat_x = x.ravel()
        at_row = (np.arange(x.shape[0]) * x.shape[1])[:, None]
        node = np.broadcast_to(self.roots, (x.shape[0], self.roots.size)).copy()
        nan = bool(np.isnan(flat_x).any())
        child, feature, threshold, leaf = self.child, self.feature, self.threshold, self.leaf
        while not leaf[node].all():
            v = flat_x[at_row + feature[node]]
            right = ~(v <= threshold[node])
            if nan:
                right &= ~(np.isnan(v) & self.missing_left[node])
            node = child[2 * node + right]
        return self.value[node]

    @cached_property
    def child(self) -> np.ndarray:
        """(2 nodes,) each node's left then right child; a leaf's are itself."""
        own = np.arange(self.feature.size)
        return np.column_stack(
            [np.where(self.leaf, own, self.left), np.where(self.leaf, own, self.right)]
        ).ravel()

    def predict(self, x: np.ndarray) -> np.ndarray:
        """The model's prediction for the rows of ``x`` (module docstring)."""
        return _sum(self.baseline, self.walk(x))


def _sum(baseline: float, leaves: np.ndarray) -> np.ndarray:
    """``((baseline + leaves[:, 0]) + leaves[:, 1]) + ...`` per row."""
    terms = np.empty((leaves.shape[0], leaves.shape[1] + 1))
    terms[:, 0] = baseline
    terms[:, 1:] = leaves
    # ``accumulate`` adds left to right, one term at a time (never pairwise as ``sum`` does):
    # scikit-learn's order, in one call instead of a Python loop over the trees (85 of
    # 166 us for one row and 100 trees).
    return np.add.accumulate(terms, axis=1)[:, -1].copy()


def concat(flats: list[FlatTrees]) -> FlatTrees:
    """Several models' trees as one forest (child indices shifted; ``baseline`` unused): one
    walk for all of them (:func:`predict_all`)."""
    shift = np.cumsum([0] + [f.feature.size for f in flats[:-1]])
    return FlatTrees(
        roots=np.concatenate([f.roots + o for f, o in zip(flats, shift, strict=True)]),
        feature=np.concatenate([f.feature for f in flats]),
        threshold=np.concatenate([f.threshold for f in flats]),
        missing_left=np.concatenate([f.missing_left for f in flats]),
        leaf=np.concatenate([f.leaf for f in flats]),
        left=np.concatenate([f.left + o for f, o in zip(flats, shift, strict=True)]),
        right=np.concatenate([f.right + o for f, o in zip(flats, shift, strict=True)]),
        value=np.concatenate([f.value for f in flats]),
        baseline=0.0,
    )


def flatten(model: Any) -> FlatTrees | None:
    """The model's trees as :class:`FlatTrees`, or None when it has a categorical split, more
    than one output, or a link other than the identity (scikit-learn answers those)."""
    predictors = getattr(model, "_predictors", None)
    link = type(getattr(getattr(model, "_loss", None), "link", None)).__name__
    if not predictors or link != "IdentityLink" or any(len(p) != 1 for p in predictors):
        return None
    trees = [p[0].nodes for p in predictors]
    nodes = np.concatenate(trees)
    if nodes["is_categorical"].any():
        return None
    sizes = np.array([t.size for t in trees])
    roots = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    offset = np.repeat(roots, sizes)
    baseline = np.ravel(model._baseline_prediction)
    return FlatTrees(
        roots=roots,
        feature=nodes["feature_idx"].astype(np.int64),
        threshold=nodes["num_threshold"].astype(np.float64),
        missing_left=nodes["missing_go_to_left"].astype(bool),
        leaf=nodes["is_leaf"].astype(bool),
        left=nodes["left"].astype(np.int64) + offset,
        right=nodes["right"].astype(np.int64) + offset,
        value=nodes["value"].astype(np.float64),
        baseline=float(baseline[0]),
    )


_FLAT: weakref.WeakKeyDictionary[Any, FlatTrees | None] = weakref.WeakKeyDictionary()


def predict(model: Any, x: np.ndarray, **limit: Any) -> np.ndarray:
    """``model.predict(x)``: by the model's :class:`FlatTrees` (flattened at its first small
    batch, kept while the model lives) for at most :data:`SMALL_BATCH` rows, else by
    scikit-learn under ``threads().limit(**limit)``. Same answer either way."""
    if x.shape[0] <= SMALL_BATCH:
        flat = _flat(model)
        if flat is not None:
            return flat.predict(x)
    with threads().limit(**limit):
        return model.predict(x)


_FOREST: weakref.WeakKeyDictionary[Any, tuple[tuple[int, ...], FlatTrees]] = (
    weakref.WeakKeyDictionary()
)


def predict_all(models: list[Any], x: np.ndarray, **limit: Any) -> np.ndarray:
    """``[m.predict(x) for m in models]`` as a (models, rows) array; for at most
    :data:`SMALL_BATCH` rows every model's trees are walked together (:func:`concat`), one
    numpy step per level for all of them instead of per model (the quantile runtime method's
    three models: 3 walks of 100 trees became one of 300). Same answers as :func:`predict`."""
    flats = [_flat(m) for m in models] if x.shape[0] <= SMALL_BATCH else []
    if not models or not flats or any(f is None for f in flats):
        return np.array([predict(m, x, **limit) for m in models])
    key = tuple(id(m) for m in models)
    held = _FOREST.get(models[0])
    if held is None or held[0] != key:
        held = _FOREST[models[0]] = (key, concat(flats))  # type: ignore[arg-type]
    leaves = held[1].walk(x)
    out, start = np.empty((len(models), x.shape[0])), 0
    for k, f in enumerate(flats):
        end = start + f.roots.size  # type: ignore[union-attr]
        out[k] = _sum(f.baseline, leaves[:, start:end])  # type: ignore[union-attr]
        start = end
    return out


def _flat(model: Any) -> FlatTrees | None:
    if model not in _FLAT:
        _FLAT[model] = flatten(model)
    return _FLAT[model]
