"""Console pages: the notes browser (a tree by path per project and owner), a note rendered
from its markdown with links and backlinks, and an edit form that checks the version read."""

from dataclasses import dataclass, field

from django import forms
from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import path, reverse

from apps.console.roles import MODERATOR, OPERATOR, actor, role_required
from apps.core.errors import ApplicationError, Conflict, NotFound
from apps.notes.models import Note
from apps.notes.selectors import (
    note_backlinks,
    note_browse,
    note_for_operator,
    note_html,
    note_links,
)
from apps.notes.services import note_update
from apps.tenancy.selectors import agent_list, project_list

ROLES = (OPERATOR, MODERATOR)
SHARED = "shared"


class BrowseForm(forms.Form):
    project = forms.ModelChoiceField(queryset=project_list(), empty_label=None)
    owner = forms.ChoiceField(required=False, label="Notes of")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        project = self._project()
        agents = agent_list(project=project) if project else []
        self.fields["owner"].choices = [
            (SHARED, "the project (shared)"),
            *((str(agent.id), f"{agent.slug} (personal)") for agent in agents),
        ]

    def _project(self):
        field = self.fields["project"]
        raw = self.data.get("project") if self.is_bound else None
        try:
            return field.clean(raw) if raw else field.queryset.first()
        except forms.ValidationError:
            return None


class NoteEditForm(forms.Form):
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    title = forms.CharField(required=False, max_length=300)
    tags = forms.CharField(required=False, help_text="Separated by spaces.")
    content = forms.CharField(
        required=False, strip=False, widget=forms.Textarea(attrs={"rows": 18})
    )


@dataclass
class TreeNode:
    """A folder or a note of the tree; folders hold children, notes hold their note."""

    name: str
    note: Note | None = None
    children: list["TreeNode"] = field(default_factory=list)


def notes_tree(notes) -> list[TreeNode]:
    """Return the notes as a tree of folders by their paths, folders before notes, by name."""
    root = TreeNode("")
    for note in notes:
        *folders, name = note.path.split("/")
        node = root
        for folder in folders:
            child = next((c for c in node.children if c.note is None and c.name == folder), None)
            if child is None:
                child = TreeNode(folder)
                node.children.append(child)
            node = child
        node.children.append(TreeNode(name, note))

    def order(node):
        node.children.sort(key=lambda c: (c.note is not None, c.name))
        for child in node.children:
            order(child)

    order(root)
    return root.children


@role_required(*ROLES)
def notes(request):
    """The tree of one project's shared notes, or of one of its agents' personal notes."""
    form = BrowseForm(request.GET or None)
    project = form._project()
    owner = request.GET.get("owner") or SHARED
    valid = {value for value, _ in form.fields["owner"].choices}
    if owner not in valid:
        messages.error(request, "That agent is not one of the project's; showing shared notes.")
        owner = SHARED
    found = []
    if project is not None:
        found = list(
            note_browse(
                project_id=project.id,
                agent_id=None if owner == SHARED else owner,
                shared=owner == SHARED,
            )
        )
    context = {"form": form, "project": project, "tree": notes_tree(found), "count": len(found)}
    asked = request.GET.get("project")
    if asked and project is None:  # it said "No projects yet" beside a list of projects
        context["problem"] = f"project={asked}: no such project; pick one from the list."
        return render(request, "console/notes/index.html", context, status=400)
    return render(request, "console/notes/index.html", context)


@role_required(*ROLES)
def note_detail(request, note_id):
    note = _note(request, note_id)
    if note is None:
        return redirect("console:notes")
    return render(request, "console/notes/detail.html", _note_context(note))


@role_required(*ROLES)
def note_edit(request, note_id):
    """GET: the note in a form with the version it was read at. POST: save it if that version
    is still current; otherwise keep the operator's text and say what changed."""
    note = _note(request, note_id)
    if note is None:
        return redirect("console:notes")
    initial = {
        "version": note.version,
        "title": note.title,
        "tags": " ".join(note.tags),
        "content": note.content,
    }
    form = NoteEditForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            note_update(
                note=note,
                expected_version=data["version"],
                title=data["title"],
                tags=data["tags"].split(),
                content=data["content"].replace("\r\n", "\n"),
                actor=actor(request),
            )
        except Conflict as error:
            note.refresh_from_db()
            form.add_error(
                None,
                f"{error.message} Someone saved version {note.version} after you opened it: "
                "your text is kept below; compare it with the note, then save again.",
            )
            form.data = form.data.copy()
            form.data["version"] = note.version
        except ApplicationError as error:
            name, _, message = error.message.partition(": ")
            form.add_error(name if name in form.fields else None, message or error.message)
        else:
            messages.success(request, f"Saved {note.path} (version {note.version}).")
            return redirect("console:note", note_id=note.id)
    return render(request, "console/notes/edit.html", {"note": note, "form": form})


def _note(request, note_id) -> Note | None:
    try:
        return note_for_operator(note_id=note_id)
    except NotFound as error:
        messages.error(request, error.message)
        return None


def _note_context(note: Note) -> dict:
    def url(target: Note) -> str:
        return reverse("console:note", kwargs={"note_id": target.id})

    return {
        "note": note,
        "html": note_html(note=note, url=url),
        "links": note_links(note=note),
        "backlinks": note_backlinks(note=note),
        "tree_url": _tree_url(note),
    }


def _tree_url(note: Note) -> str:
    owner = note.agent_id or SHARED
    return f"{reverse('console:notes')}?project={note.project_id}&owner={owner}"


urlpatterns = [
    path("notes/", notes, name="notes"),
    path("notes/<uuid:note_id>/", note_detail, name="note"),
    path("notes/<uuid:note_id>/edit/", note_edit, name="note-edit"),
]
