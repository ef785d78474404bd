"""Reads of evaluation runs, and their metrics shaped for the console."""

from django.core.exceptions import ValidationError

from apps.evaluation.models import EvaluationRun
from apps.evaluation.retrieval import METRICS, TYPES_ORDER


def evaluation_list():
    """Runs newest first (ids order only by the millisecond: the time first, then the id)."""
    return EvaluationRun.objects.select_related("project").order_by("-created_at", "-id")


def evaluation_get(*, run_id) -> EvaluationRun | None:
    """Return the run, or None when there is none or run_id is not even a run id."""
    try:
        return EvaluationRun.objects.select_related("project").filter(pk=run_id).first()
    except ValidationError:  # a hand-edited ?compare= value
        return None


SIGNAL_ORDER = ("lexical", "vector", "fused")


def _modes(block: dict) -> list[str]:
    """The modes of a metrics block in a fixed order: PostgreSQL's jsonb does not keep key order.

    Modes of the default weights come first, then each other weight group ("fused no-recency"),
    lexical, vector and fused within each.
    """

    def key(mode: str):
        signal, _, group = mode.partition(" ")
        rank = SIGNAL_ORDER.index(signal) if signal in SIGNAL_ORDER else len(SIGNAL_ORDER)
        return (group != "", group, rank, mode)

    return sorted((mode for mode in block if mode != "n"), key=key)


def evaluation_rows(run: EvaluationRun) -> list[dict]:
    """Return one row per question type and mode: {type, n, mode, metric values in order}."""
    rows = []
    for kind in TYPES_ORDER:
        block = run.metrics.get(kind, {})
        for mode in _modes(block):
            figures = block[mode]
            rows.append(
                {
                    "type": kind,
                    "n": block["n"],
                    "mode": mode,
                    "values": [figures[metric] for metric in METRICS],
                }
            )
    return rows


CHART_METRICS = ("R@5", "R@10", "R@20")
BAR_WIDTH, BAR_STEP, GROUP_GAP, MARGIN = 18, 22, 18, 10
PLOT_HEIGHT, CHART_HEIGHT = 120, 164  # bars stand on y = MARGIN + PLOT_HEIGHT; labels below
LABEL_CHAR_WIDTH = 7  # generous for the 11px labels, so a mode name never runs into the next


def evaluation_chart(run: EvaluationRun) -> dict:
    """Bars of recall@5/10/20 over all questions, per mode, with an SVG size that holds them all.

    Returns {"bars": [{x, y, height, mode, metric, value}], "labels": [{x, mode}], "width",
    "height", "view_box"}; each mode's bars form a group, with its name under the group.
    """
    bars, labels, x = [], [], MARGIN
    block = run.metrics.get("all", {})
    for mode in _modes(block):
        figures = block[mode]
        labels.append({"x": x, "mode": mode})
        group_start = x
        for metric in CHART_METRICS:
            height = round(PLOT_HEIGHT * min(max(figures[metric], 0.0), 1.0))
            bars.append(
                {
                    "x": x,
                    "y": MARGIN + PLOT_HEIGHT - height,
                    "height": height,
                    "mode": mode,
                    "metric": metric,
                    "value": figures[metric],
                }
            )
            x += BAR_STEP
        group_width = max(x - BAR_STEP + BAR_WIDTH, group_start + len(mode) * LABEL_CHAR_WIDTH)
        x = group_width + GROUP_GAP
    width = (x - GROUP_GAP + MARGIN) if bars else 2 * MARGIN
    return {
        "bars": bars,
        "labels": labels,
        "width": width,
        "height": CHART_HEIGHT,
        "view_box": f"0 0 {width} {CHART_HEIGHT}",
    }
