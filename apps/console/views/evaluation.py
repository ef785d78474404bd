"""Console page: run the labelled retrieval set against a project's config and compare runs."""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect
from django.urls import path

from apps.console.pages import paginate, render_page_or_fragment
from apps.console.roles import OPERATOR, actor, role_required
from apps.evaluation.retrieval import METRICS
from apps.evaluation.selectors import (
    evaluation_chart,
    evaluation_get,
    evaluation_list,
    evaluation_rows,
)
from apps.evaluation.services import evaluation_start
from apps.tenancy.selectors import project_list


class EvaluationForm(forms.Form):
    project = forms.ModelChoiceField(
        queryset=project_list(),
        help_text="Its memory settings (embedder, weights) are used on a scratch copy of the set.",
    )


@role_required(OPERATOR)
def evaluation(request):
    form = EvaluationForm(request.POST or None)
    if request.method == "POST":
        if form.is_valid():
            evaluation_start(project=form.cleaned_data["project"], actor=actor(request))
            messages.success(request, "Evaluation queued; results appear below when it is done.")
            return redirect("console:evaluation")
        messages.error(request, "Choose a project whose config the evaluation should use.")
    runs = paginate(request, evaluation_list(), per_page=10)
    chosen = [evaluation_get(run_id=value) for value in request.GET.getlist("compare")[:10]]
    chosen = [run for run in chosen if run is not None and run.metrics]
    latest = next((run for run in runs if run.metrics), None)
    shown = chosen[:2] or ([latest] if latest else [])
    context = {
        "form": form,
        "page": runs,
        "compare_notice": _compare_notice(request, chosen),
        "running": any(run.status in ("pending", "running") for run in runs),
        "metrics": METRICS,
        "shown": [
            {"run": run, "rows": evaluation_rows(run), "chart": evaluation_chart(run)}
            for run in shown
        ],
    }
    return render_page_or_fragment(
        request, "console/evaluation/page.html", "evaluation-runs", context
    )


def _compare_notice(request, chosen: list) -> str:
    """What the Compare button did not do, said beside the runs (it showed the latest alone)."""
    if request.GET.get("action") != "compare":
        return ""
    if not chosen:
        return "Tick one or two runs that have figures to compare them; the latest run is shown."
    if len(chosen) > 2:
        return f"{len(chosen)} runs were ticked; the first two are compared."
    return ""


urlpatterns = [path("evaluation/", evaluation, name="evaluation")]
