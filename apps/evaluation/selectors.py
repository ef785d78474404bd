"""Reads of evaluation runs, and their metrics shaped for the console."""

from apps.evaluation.models import EvaluationRun
from apps.evaluation.retrieval import METRICS, TYPES_ORDER


def evaluation_list():
    return EvaluationRun.objects.select_related("project")


def evaluation_get(*, run_id) -> EvaluationRun | None:
    return EvaluationRun.objects.select_related("project").filter(pk=run_id).first()


def evaluation_rows(run: EvaluationRun) -> list[dict]:
    """Return one row per question type and mode: {type, n, mode, metric values in order}."""
    rows = []
    for kind in TYPES_ORDER:
        block = run.metrics.get(kind, {})
        for mode, figures in block.items():
            if mode == "n":
                continue
            rows.append(
                {
                    "type": kind,
                    "n": block["n"],
                    "mode": mode,
                    "values": [figures[metric] for metric in METRICS],
                }
            )
    return rows


def evaluation_chart(run: EvaluationRun) -> list[dict]:
    """Bars of recall@5/10/20 over all questions, per mode, with their SVG geometry."""
    bars, x = [], 10
    for mode, figures in run.metrics.get("all", {}).items():
        if mode == "n":
            continue
        for metric in ("R@5", "R@10", "R@20"):
            height = round(120 * figures[metric])
            bars.append(
                {
                    "x": x,
                    "y": 130 - height,
                    "height": height,
                    "mode": mode,
                    "metric": metric,
                    "value": figures[metric],
                }
            )
            x += 22
        x += 18
    return bars
