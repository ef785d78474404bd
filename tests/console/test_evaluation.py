import json
import re

import pytest

from apps.evaluation.models import EvaluationRun
from apps.jobs.services import job_run_pending
from tests.evaluation.test_evaluation import TINY_SET


def _figures(base: float) -> dict:
    return {"R@5": base, "R@10": base + 0.1, "R@20": base + 0.2, "MRR": base, "nDCG@10": base}


def _run(project, base: float, *, modes=("lexical", "vector", "fused"), **fields) -> EvaluationRun:
    block = {"n": 3, **{mode: _figures(base) for mode in modes}}
    metrics = dict.fromkeys(("exact", "paraphrase", "temporal", "all"), block)
    return EvaluationRun.objects.create(
        project=project, started_by="user:ops", status="done", metrics=metrics, **fields
    )


def _charts(content: str) -> list[tuple[tuple[float, ...], list[dict], list[dict]]]:
    """(viewBox, rects, texts) of each chart on the page."""
    charts = []
    for svg in re.findall(r"<svg [^>]*>.*?</svg>", content, re.S):
        view_box = re.search(r'viewBox="([^"]+)"', svg)
        assert view_box, "the chart has no viewBox"
        rects = [
            {key: float(value) for key, value in re.findall(r'(\w+)="([\d.]+)"', rect)}
            for rect in re.findall(r"<rect ([^>]*)>", svg)
        ]
        texts = [
            {"x": float(x), "y": float(y), "text": text}
            for x, y, text in re.findall(r'<text x="([\d.]+)" y="([\d.]+)">([^<]*)</text>', svg)
        ]
        charts.append((tuple(float(n) for n in view_box.group(1).split()), rects, texts))
    return charts


def test_the_console_page_queues_a_run_and_shows_results(as_role, alice, settings, tmp_path):
    path = tmp_path / "set.json"
    path.write_text(json.dumps(TINY_SET))
    settings.EVALUATION_SET_PATH = path
    client = as_role("operator")

    response = client.post("/console/evaluation/", {"project": str(alice.agent.project.id)})
    assert response.status_code == 302
    polling = client.get("/console/evaluation/")
    assert b'hx-trigger="every 2s"' in polling.content
    job_run_pending()
    page = client.get("/console/evaluation/")

    assert page.status_code == 200
    run = EvaluationRun.objects.get()
    assert b"R@10" in page.content and b"<svg" in page.content
    assert f"{run.fused_recall_at_10:.3f}".encode() in page.content
    assert b'hx-trigger="every 2s"' not in page.content
    [(_, rects, _)] = _charts(page.content.decode())
    assert len(rects) == 9  # recall@5/10/20 for lexical, vector and fused


@pytest.mark.parametrize("modes", [("fused",), ("lexical", "vector", "fused")])
def test_every_bar_and_label_of_the_chart_lies_within_its_view_box(as_role, alice, modes):
    six = (*modes, *(f"{mode} no-recency" for mode in modes)) if len(modes) > 1 else modes
    _run(alice.agent.project, 0.89, modes=six)

    content = as_role("operator").get("/console/evaluation/").content.decode()

    [((min_x, min_y, width, height), rects, texts)] = _charts(content)
    assert len(rects) == 3 * len(six)
    assert re.search(rf'<svg class="chart" width="{width:g}" height="{height:g}"', content)
    for rect in rects:
        assert min_x <= rect["x"] and rect["x"] + rect["width"] <= min_x + width, rect
        assert min_y <= rect["y"] and rect["y"] + rect["height"] <= min_y + height, rect
        assert rect["height"] > 0
    labels = [text for text in texts if text["text"] in six]
    assert [label["text"] for label in labels] == list(six)
    for left, right in zip(labels, labels[1:], strict=False):
        # A mode's name (11px, under 7px a character) ends before the next one starts.
        assert left["x"] + 7 * len(left["text"]) <= right["x"]
    assert labels[-1]["x"] + 7 * len(labels[-1]["text"]) <= min_x + width
    assert all(text["y"] <= min_y + height for text in texts)


def test_comparing_past_runs_shows_each_chosen_run_side_by_side(as_role, alice, carol):
    old = _run(alice.agent.project, 0.41)
    new = _run(carol.agent.project, 0.72)
    _run(alice.agent.project, 0.15)  # the latest, shown when nothing is chosen
    failed = EvaluationRun.objects.create(started_by="user:ops", status="failed", error="boom")
    client = as_role("operator")

    latest = client.get("/console/evaluation/").content.decode()
    compared = client.get(
        "/console/evaluation/", {"compare": [str(failed.id), str(old.id), str(new.id)]}
    ).content.decode()

    assert len(_charts(latest)) == 1 and "<td>0.150</td>" in latest
    sections = re.findall(r'<section class="card">(.*?)</section>', compared, re.S)
    assert len(sections) == 2  # the failed run has no figures to compare
    assert "acme" in sections[0] and "globex" in sections[1]
    for section, base in zip(sections, (0.41, 0.72), strict=True):
        rows = re.findall(
            r"<tr><td>all</td><td>3</td><td>(\w+)</td>((?:<td>[\d.]+</td>)+)", section
        )
        assert [mode for mode, _ in rows] == ["lexical", "vector", "fused"]
        figures = [float(v) for v in re.findall(r"[\d.]+", rows[2][1])]
        assert figures == pytest.approx([base, base + 0.1, base + 0.2, base, base], abs=1e-3)
        rect = re.search(r"<rect [^>]*><title>fused R@10 ([\d.]+)</title>", section)
        assert float(rect.group(1)) == pytest.approx(base + 0.1, abs=1e-3)
    assert "<td>0.150</td>" not in "".join(sections)


def test_a_malformed_compare_value_is_ignored(as_role, alice):
    _run(alice.agent.project, 0.5)

    response = as_role("operator").get("/console/evaluation/", {"compare": ["not-a-uuid"]})

    assert response.status_code == 200
    assert len(_charts(response.content.decode())) == 1  # the latest run, as with no choice


def test_compare_with_nothing_ticked_or_too_much_says_so(as_role, alice):
    runs = [_run(alice.agent.project, base) for base in (0.3, 0.4, 0.5)]
    client = as_role("operator")

    nothing = client.get("/console/evaluation/", {"action": "compare"}).content.decode()
    three = client.get(
        "/console/evaluation/", {"action": "compare", "compare": [str(run.id) for run in runs]}
    ).content.decode()
    two = client.get(
        "/console/evaluation/", {"action": "compare", "compare": [str(runs[0].id), str(runs[1].id)]}
    ).content.decode()

    assert "Tick one or two runs that have figures to compare them" in nothing
    assert len(_charts(nothing)) == 1  # the latest, as before
    assert "3 runs were ticked; the first two are compared." in three
    assert len(_charts(three)) == 2
    assert 'role="alert"' not in two and len(_charts(two)) == 2


def test_a_run_without_a_project_choice_is_refused(as_role):
    response = as_role("operator").post("/console/evaluation/", {})

    assert response.status_code == 200
    assert b"Choose a project" in response.content
    assert not EvaluationRun.objects.exists()
