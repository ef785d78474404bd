"""The knowledge base search form: what to search, as which agent of the base's project."""

from django import forms

from apps.tenancy.selectors import agent_list

TOP_K_DEFAULT = 10


class KnowledgeSearchForm(forms.Form):
    q = forms.CharField(
        label="Search this knowledge base",
        max_length=1000,
        error_messages={"required": "type the words or question to search for."},
    )
    agent = forms.ModelChoiceField(
        queryset=agent_list(),
        label="As agent",
        help_text="Its search settings (similarity floor, fusion shares) rank the hits.",
        error_messages={
            "required": "choose the agent whose search to run.",
            "invalid_choice": "no such agent in this project; choose one from the list.",
        },
    )
    top_k = forms.IntegerField(
        label="Hits", min_value=1, max_value=50, initial=TOP_K_DEFAULT, required=False
    )

    def __init__(self, *args, kb, **kwargs):
        super().__init__(*args, auto_id="kb-search-%s", **kwargs)
        agents = agent_list(project=kb.project).order_by("slug")
        self.fields["agent"].queryset = agents
        self.fields["agent"].empty_label = None
        first = agents.first()
        if first is not None:
            self.fields["agent"].initial = first.pk
