"""Seed figures, verdicts and the markdown table of the placement experiments
(spec placement.md §3.3-§3.4 B).

Verdicts: *consistent* = same direction and within x2 of the seed's figure (for q ~ rho
claims: 0.5 <= q/rho <= 1.6, the seed's own worst case being 1.6); *direction only* =
same direction, magnitude outside x2; *not reproduced* = no effect or the opposite.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["C1_POLICIES", "C2_SEED", "CLAIRVOYANCE", "G0_SEED", "G1_FITS", "G1_SWEEP",
           "G2_POLICIES", "SEED_C1", "SEED_Q", "T1_POLICIES", "c1_seed", "c1_verdicts", "cell",
           "g0_verdicts", "g1_pair_verdicts", "g1_seed", "g2_cells", "markdown_table",
           "q_verdict", "ratio_verdict", "t1_seed", "t1_verdict"]  # fmt: skip

# The grids of spec §3.3, one list per experiment.
G1_FITS = [("best", False), ("first", False), ("best", True), ("first", True)]
G1_SWEEP = [("gpa", 0.1), ("gpa", 0.01), ("gpa", 0.001), ("av", 1.0)]
CLAIRVOYANCE = (0.001, 0.01, 0.1, 0.3, 0.5, 0.8, 1.0)
G2_POLICIES: list[tuple[str, dict[str, Any]]] = [
    ("pool-slots", {}), ("pool-av", {"f": 1}), ("pool-av", {"f": 1.25}), ("pool-av", {"f": 2}),
    ("pool-perc", {"p": 90}), ("pool-perc", {"p": 99}), ("pool-cantelli", {"b": 1.7}),
    ("gpa", {"rho": 0.1}), ("gpa", {"rho": 0.01}), ("gpa", {"rho": 0.001}),
]  # fmt: skip
T1_POLICIES: list[tuple[str, dict[str, Any]]] = [
    ("least-allocated", {}), ("first-fit", {}), ("best-fit", {}), ("round-robin", {}),
    ("random", {}), ("tlp", {"target": 40}), ("tlp", {"target": 50}), ("tlp", {"target": 70}),
    ("lvrb", {}), ("lvrb", {"sensitivity": 2}),
]  # fmt: skip
C1_POLICIES: list[tuple[str, str, dict[str, Any]]] = [
    ("off (EMR)", "cash", {"credits": "off"}),
    ("round-robin unlimited", "t3-round-robin", {"t3_mode": "unlimited"}),
    ("round-robin", "t3-round-robin", {}), ("random", "t3-random", {}),
    ("first-fit", "t3-first-fit", {}), ("cash whole_first", "cash", {}),
    ("cash literal", "cash", {"whole_first": "false"}),
]  # fmt: skip
C2_SEED = [
    ("2 VMs, 280 GB: query completion / wall clock", "-5% / -4.85%"),
    ("10 VMs, 1.2 TB", "-10.7% / -13%"),
    ("2.5 TB", "-31% / -22%"),
]


def ratio_verdict(ratio: float | None) -> str:
    if ratio is None:
        return "no seed figure"
    if 0.5 <= ratio <= 1.6:
        return "consistent"
    return "direction only" if 0.25 <= ratio <= 3.2 else "not reproduced"


SEED_Q = {"gpa 0.001": 1.6e-3, "cantelli 1": 3e-4, "cantelli 1.7": 2e-6, "cantelli 4.4": 0.0,
          "perc 99": 2e-8, "perc 95": 5e-6, "perc 90": 7e-5, "perc 100": 0.0}  # fmt: skip


def g1_seed(
    src: str, row: dict[str, Any], fit: str = "best", rebal: bool = False
) -> dict[str, str]:
    """The seed's figure for this estimator and our verdict (spec §3.4 B). FF and
    rebalancing rows are judged against the BF row by :func:`g1_pair_verdicts`."""
    if fit != "best" or rebal:
        figure = "FF ~ BF: m_abs within 1, q within 1%" if not rebal else "rebalance: q -7%"
        return {"seed": figure, "verdict": ""}
    est = row["estimator"]
    seeds = {
        "av 1": "m_abs 28.0",
        "gpa 0.1": "m_abs 35, q ~ rho",
        "gpa 0.001": "m_abs 47, q 1.6e-3",
        **{k: f"q {v:g}" for k, v in SEED_Q.items() if k != "gpa 0.001"},
    }
    seed = seeds.get(est, "q close to rho" if est.startswith("gpa") else "no seed figure")
    if est.startswith("gpa"):
        verdict = ratio_verdict(row["q_over_rho"])
    elif est == "av 1":
        verdict = "consistent" if 14 <= row["m_abs"] <= 56 else "not reproduced"
    elif est in SEED_Q:
        verdict = q_verdict(row["q"], SEED_Q[est])
    else:
        verdict = "no seed figure"
    return {"seed": seed, "verdict": verdict}


def q_verdict(q: float, seed_q: float) -> str:
    """A violation rate against the seed's: within x2 (or both 0) is consistent."""
    if seed_q == 0 or q == 0:
        if q == seed_q:
            return "consistent"
        return (
            "not reproduced (ours above the seed's)"
            if q > seed_q
            else "not reproduced (ours below)"
        )
    ratio = q / seed_q
    if 0.5 <= ratio <= 2:
        return "consistent"
    return "not reproduced (ours above the seed's)" if ratio > 2 else "not reproduced (ours below)"


def g1_pair_verdicts(rows: list[dict[str, Any]]) -> None:
    """FF rows against BF (m_abs within one machine); rebalance rows against the same fit
    without it (relative fall of q: the seed's 7% within x2 is consistent)."""
    plain = {(r["source"], r["c"], r["fit"], r["estimator"]): r for r in rows}
    for r in rows:
        if r["verdict"]:
            continue
        if r["fit"].endswith("rebalance"):
            ref = plain.get((r["source"], r["c"], r["fit"].split(" ")[0], r["estimator"]))
            fall = 1 - r["q"] / ref["q"] if ref and ref["q"] > 0 else None
            r["seed"] += "" if fall is None else f" (ours {-100 * fall:+.0f}%)"
            none = "no violations to cut" if r["q"] == 0 else "not reproduced (q rose from 0)"
            r["verdict"] = none if fall is None else (
                "consistent" if 0.035 <= fall <= 0.14
                else "direction only" if fall > 0 else "not reproduced")  # fmt: skip
        else:
            ref = plain.get((r["source"], r["c"], "BF", r["estimator"]))
            ok = ref is not None and abs(r["m_abs"] - ref["m_abs"]) <= 1.0
            r["verdict"] = "consistent" if ok else "not reproduced"


G0_SEED = {50: 0.78, 500: 0.09}


def g0_verdicts(rows: list[dict[str, Any]]) -> None:
    """Rejection rate at N = 50 and 500 against the seed's 78% and about 9%: within x2 and
    falling from 50 to 500 is consistent; falling but outside x2 is direction only."""
    by = {(r["source"], r["n_items"]): r["rejected"] for r in rows}
    for r in rows:
        seed = G0_SEED.get(r["n_items"])
        if r["source"].startswith("gauss"):  # the control: A-D rejects about 5% of true normals
            r["seed"], r["verdict"] = "control: about 5% expected", "control"
            continue
        r["seed"] = "no seed figure" if seed is None else f"{100 * seed:.0f}% rejected"
        if seed is None:
            r["verdict"] = "no seed figure"
            continue
        falls = by.get((r["source"], 500), 1.0) < by.get((r["source"], 50), 0.0)
        within = 0.5 <= r["rejected"] / seed <= 2
        r["verdict"] = ("consistent" if within and falls else
                        "direction only" if falls else "not reproduced")  # fmt: skip


def g2_cells(ms: list[dict[str, Any]], rho: float | None) -> dict[str, Any]:
    """Means over the usage seeds, q's min-max, and q/rho against the seed's q ~ rho."""
    q = [m["q"] for m in ms]
    ratio = float(np.mean(q)) / rho if rho else None
    return {
        "open_nodes": float(np.mean([m["open_nodes_mean"] for m in ms])),
        "M": float(np.mean([m["m_ratio"] for m in ms])),
        "q": float(np.mean(q)), "q_min": min(q), "q_max": max(q), "q_over_rho": ratio,
        "seed": "q close to rho" if rho else "no seed figure",
        "verdict": ratio_verdict(ratio) if rho else "no seed figure",
    }  # fmt: skip


def t1_seed(pol: str, row: dict[str, Any], base: dict[str, Any]) -> dict[str, str]:
    if row is base:
        return {"seed": "baseline", "verdict": "baseline"}
    if pol in ("tlp", "lvrb"):
        return {"seed": "fewer hot nodes, less spread", "verdict": t1_verdict(row, base)}
    return {"seed": "no seed figure", "verdict": "no seed figure"}


def t1_verdict(row: dict[str, Any], base: dict[str, Any]) -> str:
    """Against least-allocated at the same 40% line: fewer hot nodes and less spread, each
    by more than 5% (the talk gives no numbers, so only the direction can be checked)."""
    fewer = row["hot_node_share_40"] < 0.95 * base["hot_node_share_40"]
    less = row["util_spread_mean"] < 0.95 * base["util_spread_mean"]
    if fewer and less:
        return "consistent (direction; no seed number)"
    return "direction only" if fewer or less else "not reproduced"


SEED_C1 = {"round-robin": 0.40, "cash whole_first": 0.13, "cash literal": 0.13}


def c1_verdicts(rows: list[dict[str, Any]]) -> None:
    """Degradation against the seed's (+40% naive, +13% CASH: within x2 is consistent).
    CASH's claim is a cut of the naive slowdown: a CASH row no faster than round-robin on
    the same nodes is not reproduced. Unlimited: no slowdown but billed surplus and a
    higher credit spread than CASH."""

    def same(row: dict[str, Any], policy: str) -> dict[str, Any]:
        key = (row["k"], row["trace"], row.get("b0"), policy)
        return next(r for r in rows if (r["k"], r["trace"], r.get("b0"), r["policy"]) == key)

    for row in rows:
        label = row["policy"]
        if label in SEED_C1:
            ratio = row["degradation"] / SEED_C1[label]
            cuts = (
                label == "round-robin"
                or row["degradation"] < same(row, "round-robin")["degradation"]
            )
            if not cuts or ratio <= 0:
                row["verdict"] = "not reproduced"
            else:
                row["verdict"] = "consistent" if 0.5 <= ratio <= 2 else "direction only"
        elif label == "round-robin unlimited":
            cash = same(row, "cash whole_first")
            ok = row["surplus_usd"] > 0 and row["credit_std"] > cash["credit_std"]
            row["verdict"] = "consistent (direction)" if ok else "not reproduced"
        else:
            row["verdict"] = "reference" if label.startswith("off") else "no seed figure"


def c1_seed(label: str) -> dict[str, str]:
    seeds = {
        "round-robin": "naive T3 +40%",
        "cash whole_first": "CASH +13%, 30.7% cheaper",
        "cash literal": "CASH +13%",
        "round-robin unlimited": "~CASH elapsed, surplus billed",
        "off (EMR)": "reference",
    }
    return {"seed": seeds.get(label, "no seed figure")}


def markdown_table(title: str, columns: list[str], rows: list[dict[str, Any]]) -> str:
    lines = [f"#### {title}", "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(cell(row.get(c)) for c in columns) + " |")
    return "\n".join(lines)


def cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if value == 0:
            return "0"
        return (
            f"{value:.3g}"
            if abs(value) < 1e-2 or abs(value) >= 1e4
            else f"{value:.3f}".rstrip("0").rstrip(".")
        )
    return str(value)
