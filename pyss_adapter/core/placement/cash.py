"""CASH: credit-aware scheduling on burstable (AWS T3) nodes (seed ``001_735b866a87c04c3c.txt``;
spec placement.md §2.4).

Token bucket per node (AWS "burstable credits baseline concepts"): 1 credit = 1 vCPU
at 100% for one minute; earn rate e = baseline x vCPUs per minute; cap B_max = 24 h of
earning; T3 starts with no launch credits (B0 = 0). Between events, with nominal
demand D (vCPU) and consumption c::

    dB/dt = e - c, clamped to [0, B_max]                        (standard)
    throttled when B = 0 and D > e: speed f = e / D, else f = 1
    unlimited: no throttle, B may go below 0; at each hour surplus beyond B_max is
    charged ($0.05 per vCPU-hour) and B reset to -B_max; the rest is charged at the end

CASH's order (seed "Algorithm 1"): burst jobs (mu_hat >= theta) fill nodes in
decreasing credit order (Phase 1; with ``whole_first`` the nodes that hold the whole
job first); network jobs take one slot per node per round from the least credits
(Phase 2, never set from SWF); other jobs go in node-id order (Phase 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["INSTANCES", "T3Bucket", "break_even", "cash_pieces"]

# name: (vCPU, baseline fraction per vCPU, $/h on demand). t3.* from the AWS doc's table;
# larger sizes' prices are the doc's t3.large price scaled by vCPU (spec §2.4).
INSTANCES: dict[str, tuple[int, float, float]] = {
    "t3.nano": (2, 0.05, 0.0052),
    "t3.micro": (2, 0.10, 0.0104),
    "t3.small": (2, 0.20, 0.0208),
    "t3.medium": (2, 0.20, 0.0416),
    "t3.large": (2, 0.30, 0.0835),
    "t3.xlarge": (4, 0.40, 0.1670),
    "t3.2xlarge": (8, 0.40, 0.334),
}
M5_PRICE = {"t3.large": 0.096, "t3.xlarge": 0.192, "t3.2xlarge": 0.384}
SURPLUS_PER_VCPU_H = 0.05
EMR_FEE_PER_H = 0.096  # unverified (spec §2.4): 1 - 0.3328/0.48 = the seed's 30.7%


@dataclass
class T3Bucket:
    """One node's CPU credits; ``run`` moves it along a constant demand (vCPU)."""

    vcpus: float
    baseline: float
    mode: str = "standard"
    balance: float = 0.0
    earned: float = 0.0
    consumed: float = 0.0
    discarded: float = 0.0
    charged: float = 0.0  # surplus credits billed (unlimited)

    @property
    def earn_per_min(self) -> float:
        return self.baseline * self.vcpus

    @property
    def cap(self) -> float:
        return 24 * 60 * self.earn_per_min

    def speed(self, demand: float) -> float:
        """f = e / D when throttled (standard, B = 0, D > e), else 1."""
        e = self.earn_per_min
        if self.mode == "standard" and self.balance <= 0 and demand > e:
            return e / demand
        return 1.0

    def time_to_empty_s(self, demand: float) -> float:
        """Seconds until B reaches 0 at full speed (inf if it never does)."""
        net = demand - self.earn_per_min
        return math.inf if net <= 0 or self.balance <= 0 else 60.0 * self.balance / net

    def run(self, seconds: float, demand: float) -> None:
        """Move ``seconds`` at nominal demand ``demand`` (vCPU), throttling when empty."""
        e, left = self.earn_per_min, seconds
        while left > 0:
            if self.mode == "standard" and self.balance > 0 and demand > e:
                step = min(left, self.time_to_empty_s(demand))
            else:
                step = left
            use = demand * self.speed(demand)
            self._flow(step / 60.0, use)
            left -= step

    def _flow(self, minutes: float, use: float) -> None:
        e = self.earn_per_min
        raw = self.balance + (e - use) * minutes
        over = max(raw - self.cap, 0.0)
        under = max(-raw, 0.0) if self.mode == "standard" else 0.0
        self.earned += e * minutes
        self.consumed += use * minutes - under
        self.discarded += over
        self.balance = raw - over + under

    def charge_hour(self) -> float:
        """Unlimited mode, at an hour boundary: bill surplus beyond B_max; credits billed."""
        if self.mode != "unlimited" or self.balance >= -self.cap:
            return 0.0
        billed = -self.cap - self.balance
        self.balance = -self.cap
        self.charged += billed
        return billed

    def charge_end(self) -> float:
        """At the end of the run the remaining surplus is billed."""
        if self.mode != "unlimited" or self.balance >= 0:
            return 0.0
        billed = -self.balance
        self.charged += billed
        self.balance = 0.0
        return billed


def surplus_usd(credits: float, rate_per_vcpu_h: float = SURPLUS_PER_VCPU_H) -> float:
    """Dollars for surplus credits (one credit = one vCPU-minute)."""
    return credits * rate_per_vcpu_h / 60.0


def break_even(
    t3_price: float, m5_price: float, vcpus: int, baseline: float, rate: float = SURPLUS_PER_VCPU_H
) -> tuple[float, float, float]:
    """AWS's unlimited-mode table: (burst minutes per hour, extra CPU %, break-even CPU %).

    The price gap buys ``(m5 - t3) / rate`` vCPU-hours of surplus per hour.
    """
    vcpu_h = (m5_price - t3_price) / rate
    extra_pct = 100.0 * vcpu_h / vcpus
    return 60.0 * vcpu_h, extra_pct, 100.0 * baseline + extra_pct


def cash_pieces(
    credits: list[float], free: list[int], need: int, kind: str, whole_first: bool = True
) -> list[tuple[int, int]]:
    """CASH's pieces ``(node, cores)`` for a job of ``need`` cores of ``kind``
    ("burst" | "network" | "other"); nodes are list indices, ties to the lowest id."""
    free = list(free)
    out: dict[int, int] = {}
    if kind == "network":
        order = sorted(range(len(free)), key=lambda n: (credits[n], n))
        while need > 0:
            moved = False
            for n in order:
                if need and free[n] > 0:
                    free[n] -= 1
                    out[n] = out.get(n, 0) + 1
                    need -= 1
                    moved = True
            if not moved:
                raise ValueError("not enough free cores for the network job")
        return [(n, out[n]) for n in out]
    if kind == "burst":
        order = sorted(range(len(free)), key=lambda n: (-credits[n], n))
    else:
        order = list(range(len(free)))
    if whole_first:
        whole = [n for n in order if free[n] >= need]
        if whole:
            return [(whole[0], need)]
    pieces = []
    for n in order:
        if need == 0:
            break
        s = min(need, free[n])
        if s > 0:
            pieces.append((n, s))
            need -= s
    if need:
        raise ValueError("not enough free cores for the job")
    return pieces
