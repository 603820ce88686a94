"""Placement through the replay service: bad values name their field; no placement, no block."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from pyss_adapter.services import ReplaySettings, simulate
from queuecast.errors import InvalidInput
from traces.core.swf import read_swf

HEADER = "; MaxProcs: 16\n; MaxNodes: 4\n"
# job submit wait run procs cpu mem req_procs req_time req_mem status user ...
ROWS = [
    (1, 0, 0, 100, 4, 80, -1, 4, 200, -1, 1, 1),
    (2, 10, 0, 300, 8, -1, -1, 8, 400, -1, 1, 1),
    (3, 20, 0, 50, 2, 50, -1, 2, 100, -1, 1, 2),
    (4, 30, 0, 500, 16, 100, -1, 16, 600, -1, 1, 3),
]


def _swf(tmp_path: Path, with_cpu: bool = True):
    lines = [HEADER]
    for r in ROWS:
        r = list(r)
        if not with_cpu:
            r[5] = -1
        lines.append(" ".join(str(v) for v in r) + " -1 -1 -1 -1 -1 -1\n")
    path = tmp_path / "t.swf.gz"
    with gzip.open(path, "wt") as fh:
        fh.writelines(lines)
    return read_swf(path)


def test_without_placement_the_summary_has_no_placement_block(tmp_path: Path) -> None:
    _, summary = simulate(_swf(tmp_path), ReplaySettings())
    assert "placement" not in summary


def test_header_cores_per_node_and_user_imputation(tmp_path: Path) -> None:
    result, summary = simulate(_swf(tmp_path), ReplaySettings(placement="first-fit"))
    block = summary["placement"]
    assert block["cluster"] == {
        "nodes": 4, "cores_per_node": 4, "last_node_cores": 4, "source": "header"
    }  # fmt: skip
    assert block["usage"]["imputed_user"] == 1  # job 2 takes user 1's median (0.8)
    assert result.placement_log["cores"].sum() == 30


def test_a_log_without_field_6_fails_naming_it_unless_filled(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="field 6") as err:
        simulate(_swf(tmp_path, with_cpu=False), ReplaySettings(placement="tlp"))
    assert err.value.context["field"] == "usage_fill"
    _, summary = simulate(
        _swf(tmp_path, with_cpu=False), ReplaySettings(placement="tlp", usage_fill=1.0)
    )
    assert summary["placement"]["usage"]["fill"] == 1.0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"placement": "nope"}, "placement"),
        ({"placement": "tlp", "placement_options": {"targett": 1}}, "placement_options"),
        ({"placement": "tlp", "usage_rho": 0}, "usage_rho"),
        ({"placement": "tlp", "cores_per_node": 0}, "cores_per_node"),
        ({"placement": "gpa", "usage_knowledge": "psychic"}, "usage_knowledge"),
    ],
)
def test_bad_placement_settings_name_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        ReplaySettings(**kwargs)
    assert err.value.context["field"] == field


def test_the_trace_usage_model_needs_a_file_and_reads_it(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as err:
        ReplaySettings(placement="first-fit", usage_model="trace")
    assert err.value.context["field"] == "usage_file"
    use = tmp_path / "use.csv"
    use.write_text("job_id,t_offset_s,cores_used\n4,0,16\n")  # job 4 keeps all 16 cores busy
    settings = ReplaySettings(placement="first-fit", usage_model="trace", usage_file=str(use))
    _, summary = simulate(_swf(tmp_path), settings)
    assert summary["placement"]["usage"]["model"] == "trace"
    _, const = simulate(_swf(tmp_path), ReplaySettings(placement="first-fit"))
    # Job 4 runs alone on all 4 nodes; its use rises from 100/500 per core to 1.
    assert (
        summary["placement"]["metrics"]["util_active_mean"]
        > const["placement"]["metrics"]["util_active_mean"]
    )


def test_heat_map_and_credit_plots_are_written_from_the_block(tmp_path: Path) -> None:
    from pyss_adapter.placement_plots import plot_credits, plot_heatmap

    _, cash = simulate(_swf(tmp_path), ReplaySettings(placement="cash"))
    _, tlp = simulate(_swf(tmp_path), ReplaySettings(placement="tlp"))
    plot_heatmap(cash["placement"], str(tmp_path / "h.png"))
    assert (tmp_path / "h.png").read_bytes()[:4] == b"\x89PNG"
    assert plot_credits(cash["placement"], str(tmp_path / "c.png"))
    assert (tmp_path / "c.png").stat().st_size > 1000
    assert not plot_credits(tlp["placement"], str(tmp_path / "none.png"))
    assert not (tmp_path / "none.png").exists()
