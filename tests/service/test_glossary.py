"""The glossary: one entry per term the pages link to, true to the numbers the code uses."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from django.template import Context, Template, TemplateSyntaxError
from django.test import Client

from jobmolding.core.candidates import NEWCOMER_GRID, grid_sizes
from jobmolding.core.delay import DELAY_THRESHOLD, MERGE_FRACTION
from predictor.core.bundle import TUNE_FRACTION
from predictor.core.runtime.density import DensityRangeSet
from predictor.core.runtime.params import RuntimeParams
from predictor.core.runtime.registry import FACTORIES as RUNTIME_METHODS
from predictor.core.wait import metrics as wait_metrics
from predictor.core.wait.auto import CANDIDATES, AutoWait
from predictor.core.wait.local_interval import local_online
from predictor.core.wait.registry import FACTORIES as WAIT_METHODS
from pyss_adapter.core.stats import BSLD_BOUND_S, CPU_HOUR_EDGES
from queuecast import glossary, humanize

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
TAG = re.compile(r"""\{%\s*(?:term|tip)\s+["']([\w-]+)["']""")


def text(key: str) -> str:
    t = glossary.get(key)
    return " ".join([t.short, *t.paragraphs])


@pytest.mark.parametrize(("kind", "names"), [("wait", WAIT_METHODS), ("runtime", RUNTIME_METHODS)])
def test_every_registered_method_has_a_glossary_entry(kind: str, names: dict) -> None:
    missing = [n for n in names if glossary.for_method(kind, n) is None]
    assert not missing, f"{kind} methods without a glossary entry: {missing}"


def test_every_term_a_template_names_is_in_the_glossary() -> None:
    used = {k for p in TEMPLATES.rglob("*.html") for k in TAG.findall(p.read_text())}
    assert len(used) > 30  # the pages do link their terms
    assert used <= set(glossary.TERMS), sorted(used - set(glossary.TERMS))


def test_an_unknown_term_in_a_template_fails_loudly() -> None:
    with pytest.raises((KeyError, TemplateSyntaxError), match="no glossary term"):
        Template('{% load qc %}{% term "no-such-term" %}').render(Context())


def test_term_tag_links_to_the_entry_with_its_definition_as_tooltip() -> None:
    html = Template('{% load qc %}{% term "aae" %} {% term "aae" "error" %}').render(Context())
    short = glossary.get("aae").short
    assert f'href="/glossary/#aae" title="{short}">AAE</a>' in html
    assert ">error</a>" in html


def test_method_names_link_only_when_the_glossary_knows_them() -> None:
    html = Template('{% load qc %}{{ a|method_term:"wait" }} {{ b|method_term:"wait" }}').render(
        Context({"a": "zero", "b": "<b>new</b>"})
    )
    assert 'href="/glossary/#always-zero"' in html
    assert "&lt;b&gt;new&lt;/b&gt;" in html


@pytest.mark.django_db
def test_glossary_page_shows_every_term_under_its_anchor_without_logging_in() -> None:
    page = Client().get("/glossary/")
    assert page.status_code == 200
    body = page.content.decode()
    for key, term in glossary.TERMS.items():
        assert f'id="{key}"' in body, key
        assert term.paragraphs[0][:40] in body.replace("&#x27;", "'").replace("&quot;", '"')


def test_delay_numbers_are_the_rule_the_code_applies() -> None:
    assert f"{DELAY_THRESHOLD:.0%}" == "30%"
    assert "30%" in text("delay-threshold") and "70%" in text("delay-threshold")
    assert f"within {MERGE_FRACTION:.0%} of the time" in text("delayed-submission")


def test_replay_measures_use_the_simulators_constants() -> None:
    assert f"max(runtime, {BSLD_BOUND_S:g} s)" in text("bounded-slowdown")
    edges = ", ".join(f"{e:,.0f}" for e in CPU_HOUR_EDGES[:-1]) + f" and {CPU_HOUR_EDGES[-1]:,.0f}"
    assert edges in text("cpu-hours-class")


def test_wait_measures_use_the_metrics_constants() -> None:
    classes = text("wait-class")
    for edge in wait_metrics.WAIT_CLASS_EDGES:
        assert f"{edge:,.0f} s ({humanize.duration(edge)})" in classes
    correct = text("correct-share")
    hours = [humanize.duration(w) for w in wait_metrics.SLAB_WIDTHS_S]
    bounds = [humanize.duration(b) for b in wait_metrics.SLAB_BOUNDS_S]
    assert hours[2] == "1 h" and f"1 h for predictions up to {bounds[2]}" in correct
    for width, bound in zip(hours[3:-1], bounds[3:], strict=True):
        assert f"{width} up to {bound}" in correct
    assert f"{hours[-1]} beyond" in correct


def test_interval_explanation_uses_the_calibrations_settings() -> None:
    defaults = {k: p.default for k, p in inspect.signature(local_online).parameters.items()}
    coverage = text("interval-coverage")
    assert f"last {defaults['window']:,} jobs" in coverage
    assert f"the {defaults['k']} whose prediction" in coverage
    assert f"step {defaults['gamma']:g}" in coverage
    assert f"before {defaults['min_pool']} waits are known" in coverage


def test_method_entries_use_the_methods_settings() -> None:
    assert ", ".join(CANDIDATES[:-1]) + f" and {CANDIDATES[-1]}" in text("auto")
    assert AutoWait().fallback_among == "all"  # the fallback's options, as the entry says
    assert "fallback: the weighted mean or any one candidate" in text("auto")
    assert f"at most {DensityRangeSet().max_coverage:.0%}" in text("density")
    params = RuntimeParams()
    assert f"{params.compact_ratio:g} times its lower end" in text("rangeset")
    assert f"keeps the {params.max_ranges} most likely" in text("rangeset")
    assert f"({TUNE_FRACTION:.0%} of the jobs by default)" in text("tuning-part")


def test_the_newcomer_grid_is_the_one_described() -> None:
    assert NEWCOMER_GRID == "range"
    assert grid_sizes(16, 128, NEWCOMER_GRID).tolist() == [4, 8, 16, 32, 64]
    assert "powers of two within 4 times the asked size" in text("candidates")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "other"), [("/api/docs/", "/api/redoc/"), ("/api/redoc/", "/api/docs/")]
)
def test_api_docs_pages_lead_back_to_the_app(url: str, other: str) -> None:
    from tests.service.traces_support import make_user

    client = Client()
    client.force_login(make_user("reader"))
    page = client.get(url)
    assert page.status_code == 200
    back = page.content.decode().split('class="qc-back"')[1].split("</nav>")[0]
    assert 'href="/">← Queuecast</a>' in back
    assert 'href="/predict/"' in back and 'href="/glossary/"' in back and f'href="{other}"' in back
