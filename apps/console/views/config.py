"""Console pages: the memory config editor (global defaults, project and agent levels)."""

import json
from dataclasses import dataclass
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.shortcuts import redirect
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from apps.console.config_effect import effect_of
from apps.console.pages import paginate, render_page_or_fragment
from apps.console.roles import ADMIN, actor, role_required
from apps.core.errors import ApplicationError, Conflict
from apps.memconfig.schema import BY_KEY, SETTINGS, Setting
from apps.memconfig.selectors import (
    config_defaults,
    config_effective,
    config_effective_for_project,
    config_history,
    config_inherited,
    config_level_get,
    config_version_changes,
)
from apps.memconfig.services import config_rollback, config_update
from apps.tenancy.models import Agent, Project
from apps.tenancy.selectors import agent_list, project_list

HISTORY_PAGE = 10


@dataclass(frozen=True)
class Level:
    """A config level: global defaults (key ""), a project ("acme") or an agent ("acme/bot")."""

    key: str = ""
    project: Project | None = None
    agent: Agent | None = None

    @property
    def kind(self) -> str:
        return "agent" if self.agent else "project" if self.project else "default"

    @property
    def url(self) -> str:
        query = f"?{urlencode({'level': self.key})}" if self.key else ""
        return reverse("console:config") + query


class LevelForm(forms.Form):
    level = forms.ChoiceField(required=False, label="Level")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.projects = {project.slug: project for project in project_list()}
        self.agents = {str(agent): agent for agent in agent_list()}
        groups = {slug: [(slug, f"{slug} · project")] for slug in self.projects}
        for key, agent in self.agents.items():
            groups[agent.project.slug].append((key, f"{key} · agent"))
        choices = [("", "Global defaults (environment)")]
        self.fields["level"].choices = choices + list(groups.items())

    def clean_level(self) -> Level:
        key = self.cleaned_data["level"]
        if key in self.agents:
            return Level(key=key, project=self.agents[key].project, agent=self.agents[key])
        if key in self.projects:
            return Level(key=key, project=self.projects[key])
        return Level()


class ConfigLevelForm(forms.Form):
    """One input per setting holding this level's own override; an empty input inherits."""

    expected_version = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    note = forms.CharField(
        required=False, max_length=300, label="Note", help_text="Why, for the history (optional)."
    )

    def __init__(self, *args, level: Level, values: dict, **kwargs):
        super().__init__(*args, **kwargs)
        self.level, self.values, self.stale = level, values, False
        for setting in SETTINGS:
            self.fields[setting.key] = forms.CharField(
                required=False,
                label=setting.key,
                initial=_text(values.get(setting.key)),
                widget=_widget(setting, locked=self.locked(setting)),
                # A posted value for a setting that nothing acts on is ignored, not saved.
                disabled=not setting.in_use,
            )

    def locked(self, setting: Setting) -> bool:
        return not setting.in_use or (self.level.agent is not None and setting.project_only)

    def changes(self) -> dict:
        """Only the settings whose input differs from the stored override; '' becomes None.

        A setting missing from the request (a disabled input) stays as it is.
        """
        changed = {}
        for setting in SETTINGS:
            if setting.key not in self.data:
                continue
            text = self.cleaned_data.get(setting.key, "")
            if text != _text(self.values.get(setting.key)):
                changed[setting.key] = text if text != "" else None
        return changed

    def add_service_error(self, exc: ApplicationError) -> None:
        """Put a service's per-setting messages next to their inputs, the rest above the form."""
        invalid = [key for key in exc.details if key in BY_KEY]
        for key in invalid:
            self.add_error(key, f"{key} {exc.details[key]}")
        if isinstance(exc, Conflict) and exc.code == "stale_version":
            self.stale = True
            self.add_error(
                None,
                "Not saved: someone else changed this level while you were editing it (it is now "
                f"at version {exc.details.get('current_version')}, you started from version "
                f"{self.cleaned_data.get('expected_version')}). Reload it to see their change, "
                "then make yours again.",
            )
        elif invalid:
            self.add_error(None, f"Not saved: fix {', '.join(invalid)} (see below).")
        else:
            self.add_error(None, f"Not saved: {exc.message}")

    def rows(self, *, effective) -> list[dict]:
        return [
            {
                "setting": setting,
                "field": self[setting.key],
                "locked": self.locked(setting),
                "effective": _text(effective[setting.key], empty="(empty)"),
                "effect": effect_of(setting.key),
                "source": effective.sources[setting.key],
            }
            for setting in SETTINGS
        ]


@role_required(ADMIN)
def index(request):
    """GET shows a level (?level=acme or acme/bot); POST saves the changed overrides of one."""
    chooser = LevelForm(request.POST if request.method == "POST" else request.GET or None)
    level = chooser.cleaned_data["level"] if chooser.is_valid() else Level()
    form = None
    if chooser.is_bound and not chooser.is_valid():
        messages.error(request, "No such project or agent; choose a level from the list.")
    elif request.method == "POST" and level.kind == "default":
        messages.error(request, "The global defaults come from the environment: read-only here.")
    elif request.method == "POST":
        config = config_level_get(project=level.project, agent=level.agent)
        form = ConfigLevelForm(request.POST, level=level, values=config.values if config else {})
        if not form.is_valid():
            messages.error(request, f"{level.key} was not saved; see the form.")
        elif _save(request, form):
            if not request.htmx:
                return redirect(level.url)
            form = None
    context = {"chooser": chooser, **_level_context(request, level, form)}
    return render_page_or_fragment(request, "console/config/index.html", "config-level", context)


def _save(request, form: ConfigLevelForm) -> bool:
    """Apply the form's changes; False when the form now carries the errors to show."""
    changes, level = form.changes(), form.level
    if not changes:
        messages.info(request, "Nothing to save: no setting was changed.")
        return True
    try:
        config = config_update(
            changes=changes,
            changed_by=actor(request),
            project=None if level.agent else level.project,
            agent=level.agent,
            expected_version=form.cleaned_data["expected_version"],
            note=form.cleaned_data["note"],
        )
    except ApplicationError as exc:
        form.add_service_error(exc)
        messages.error(request, f"{level.key} was not saved; see the form.")
        return False
    messages.success(
        request, f"Saved {level.key} as version {config.version} ({', '.join(changes)})."
    )
    return True


@role_required(ADMIN)
@require_POST
def rollback(request, to_version):
    """Restore a level's values of version to_version (0: no overrides) as a new version."""
    form = LevelForm(request.POST)
    level = form.cleaned_data["level"] if form.is_valid() else Level()
    config = config_level_get(project=level.project, agent=level.agent) if level.key else None
    if config is None:
        messages.error(request, "Nothing to roll back: choose a project or agent with a history.")
    else:
        try:
            restored = config_rollback(
                config=config, to_version=to_version, changed_by=actor(request)
            )
        except ApplicationError as exc:
            messages.error(request, exc.message)
        else:
            _report_rollback(request, level, to_version, config, restored)
    if not request.htmx:
        return redirect(level.url)
    context = {"chooser": form, **_level_context(request, level, None)}
    return render_page_or_fragment(request, "console/config/index.html", "config-level", context)


def _report_rollback(request, level, to_version, before, after) -> None:
    if after.version == before.version:
        messages.info(request, f"{level.key} already has the values of version {to_version}.")
    else:
        messages.success(
            request,
            f"Restored {level.key} to the values of version {to_version} "
            f"(saved as version {after.version}).",
        )


def _level_context(request, level: Level, form: ConfigLevelForm | None) -> dict:
    if level.kind == "default":
        defaults = [
            (
                row,
                _text(row.value, empty="(empty)"),
                _text(row.setting.default, empty="(empty)"),
                effect_of(row.setting.key),
            )
            for row in config_defaults()
        ]
        return {"level": level, "defaults": defaults}
    config = config_level_get(project=level.project, agent=level.agent)
    values, version = (config.values, config.version) if config else ({}, 0)
    if form is None:
        form = ConfigLevelForm(level=level, values=values, initial={"expected_version": version})
    if level.agent:
        effective = config_effective(agent=level.agent)
    else:
        effective = config_effective_for_project(project_id=level.project.id)
    _placeholders(form, config_inherited(agent=level.agent))
    page = paginate(request, config_history(config=config), HISTORY_PAGE) if config else None
    return {
        "level": level,
        "form": form,
        "rows": form.rows(effective=effective),
        "version": version,
        "has_overrides": bool(values),
        "page": page,
        "history": [(entry, _changes(entry)) for entry in page] if page else [],
        "query": urlencode({"level": level.key}),
    }


def _changes(entry) -> list[tuple[str, str, str]]:
    """(key, before, after) of one version, with 'inherit' where the level did not set the key."""
    return [
        (
            change.key,
            _text(change.before, empty='""') if change.before_set else "inherit",
            _text(change.after, empty='""') if change.after_set else "inherit",
        )
        for change in config_version_changes(version=entry)
    ]


def _placeholders(form: ConfigLevelForm, inherited) -> None:
    """Show in each empty input what it inherits, and from where."""
    for setting in SETTINGS:
        hint = f"inherit: {_text(inherited[setting.key], empty='(empty)')}"
        hint += f" ({inherited.sources[setting.key]})"
        widget = form.fields[setting.key].widget
        if setting.type is bool:
            widget.choices = [("", hint), ("true", "true"), ("false", "false")]
        elif setting.choices:
            widget.choices = [("", hint), *((value, value) for value in setting.choices)]
        else:
            widget.attrs["placeholder"] = hint


def _widget(setting: Setting, *, locked: bool) -> forms.Widget:
    attrs = {}
    if locked:
        attrs = {"disabled": True, "title": "Set per project" if setting.in_use else "Not used yet"}
    if setting.type is bool or setting.choices:
        # Enumerated settings are chosen, not typed (their choices come from the schema).
        return forms.Select(attrs=attrs)
    if setting.type is str:
        return forms.TextInput(attrs={**attrs, "maxlength": 200})
    bounds = {
        name: f"{value:g}"
        for name, value in (("min", setting.minimum), ("max", setting.maximum))
        if value is not None
    }
    step = "1" if setting.type is int else "any"
    return forms.NumberInput(attrs={**attrs, **bounds, "step": step})


def _text(value, *, empty: str = "") -> str:
    """A value as its input shows it: true/false for booleans, '' for unset."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value == "":
        return empty
    if isinstance(value, str | int | float):
        return str(value)
    return json.dumps(value)


urlpatterns = [
    path("config/", index, name="config"),
    path("config/rollback/<int:to_version>/", rollback, name="config-rollback"),
]
