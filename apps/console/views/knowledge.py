"""Console pages: knowledge bases, their documents with live ingestion progress, and chunks."""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.template.defaultfilters import filesizeformat, pluralize
from django.urls import path
from django.views.decorators.http import require_http_methods, require_POST

from apps.console.kb_search import KnowledgeSearchForm
from apps.console.pages import (
    filter_problems,
    paginate,
    query_without_page,
    render_page_or_fragment,
)
from apps.console.roles import CURATOR, actor, role_required
from apps.core.errors import ApplicationError, Conflict, NotFound
from apps.knowledge.models import DocumentStatus
from apps.knowledge.selectors import (
    chunk_list,
    document_by_id,
    document_list,
    knowledge_base_browse,
    knowledge_base_by_id,
    knowledge_base_sizes,
    knowledge_base_status_counts,
)
from apps.knowledge.services import (
    document_delete,
    document_from_text,
    document_from_url,
    document_reindex,
    document_upload,
    knowledge_base_create,
    knowledge_base_delete,
)
from apps.tenancy.selectors import project_list

IN_PROGRESS = {DocumentStatus.PENDING, DocumentStatus.PROCESSING}
CHUNK_PAGE = 20


class KnowledgeBaseFilterForm(forms.Form):
    project = forms.ModelChoiceField(queryset=project_list(), required=False, empty_label="any")
    status = forms.ChoiceField(
        choices=[("", "any"), *DocumentStatus.choices],
        required=False,
        label="With documents",
        help_text="Only knowledge bases holding documents in this state.",
    )


class KnowledgeBaseCreateForm(forms.Form):
    """The create form shares its page with the filter form, so its ids get a prefix."""

    project = forms.ModelChoiceField(queryset=project_list(), empty_label="choose a project")
    slug = forms.SlugField(max_length=64, help_text="Agents name it in search scopes.")
    name = forms.CharField(max_length=200, required=False)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, auto_id="new-kb-%s", **kwargs)


class PasteTextForm(forms.Form):
    title = forms.CharField(max_length=300)
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 6}), strip=False)


@role_required(CURATOR)
@require_http_methods(["GET", "POST"])
def knowledge(request):
    """Knowledge bases of every project; a POST creates one and opens it."""
    filter_form = KnowledgeBaseFilterForm(request.GET or None)
    filters = filter_form.cleaned_data if filter_form.is_valid() else {}
    project, status = filters.get("project"), filters.get("status") or None
    form = KnowledgeBaseCreateForm(request.POST if request.method == "POST" else None)
    if request.method == "POST":
        kb = _create(form, actor(request))
        if kb is not None:
            messages.success(request, f"Knowledge base {kb.slug} created. Upload documents here.")
            return redirect("console:knowledge-base", kb_id=kb.id)
        if request.htmx:
            return render(request, "console/knowledge/knowledge-base-create.html", {"form": form})
    elif project is not None:
        form = KnowledgeBaseCreateForm(initial={"project": project})
    kbs = knowledge_base_browse(project_id=project.id if project else None)
    if status:
        # A subquery, not a join: a join would multiply the document counts of the list.
        holding = kbs.model.objects.filter(documents__status=status).values("pk")
        kbs = kbs.filter(pk__in=holding)
    context = {
        "filter_form": filter_form,
        "problems": filter_problems(filter_form),
        "status": status,
        "form": form,
        "page": paginate(request, kbs),
        "query": query_without_page(request),
    }
    return render_page_or_fragment(
        request,
        "console/knowledge/index.html",
        "knowledge-base-list",
        context,
        status=400 if context["problems"] else 200,
    )


def _create(form, by: str):
    """Create the knowledge base the form describes, or put the reason on the form."""
    if not form.is_valid():
        return None
    try:
        return knowledge_base_create(actor=by, **form.cleaned_data)
    except Conflict as exc:
        form.add_error("slug", exc.message)
    except ApplicationError as exc:
        form.add_error(None, exc.message)
    return None


@role_required(CURATOR)
def knowledge_base_detail(request, kb_id):
    """A knowledge base: upload forms and #document-list, which htmx polls while it ingests."""
    kb = _found(knowledge_base_by_id, kb_id=kb_id)
    return render_documents(request, kb, PasteTextForm())


@role_required(CURATOR)
@require_http_methods(["GET", "POST"])
def knowledge_base_delete_view(request, kb_id):
    """GET: what deleting the knowledge base removes, and a button; POST: delete it."""
    kb = _found(knowledge_base_by_id, kb_id=kb_id)
    if request.method == "POST":
        counts = knowledge_base_delete(kb=kb, actor=actor(request))
        messages.success(
            request,
            f"Deleted knowledge base {kb.slug} with {counts['documents']} "
            f"document{pluralize(counts['documents'])} and {counts['chunks']} "
            f"chunk{pluralize(counts['chunks'])}.",
        )
        return redirect("console:knowledge")
    context = {"kb": kb, "sizes": knowledge_base_sizes(kb=kb)}
    return render(request, "console/knowledge/knowledge-base-delete.html", context)


@role_required(CURATOR)
@require_POST
def knowledge_base_upload(request, kb_id):
    """Store each uploaded file and web page address; refusals and duplicates are reported."""
    kb = _found(knowledge_base_by_id, kb_id=kb_id)
    files = request.FILES.getlist("files")
    # One address per line, as the field says: split on spaces too, "not a url" was refused
    # as three addresses ("not", "a", "url").
    urls = [line.strip() for line in request.POST.get("urls", "").splitlines() if line.strip()]
    if getattr(request, "upload_too_large", False):
        files, urls = [], []  # the request was cut off at the oversized file; store none of it
        messages.error(
            request,
            f"A file is over the upload limit of "
            f"{filesizeformat(settings.KNOWLEDGE_MAX_UPLOAD_BYTES)}, so nothing was stored. "
            "Split that file; upload the others on their own.",
        )
    elif not files and not urls:
        messages.error(
            request, "Choose or drop at least one file to upload, or give a web page's address."
        )
    pages = _store_urls(request, kb, urls)
    stored = 0
    for upload in files:
        try:
            result = document_upload(kb=kb, upload=upload, actor=actor(request))
        except ApplicationError as exc:
            messages.error(request, f"{upload.name} was refused: {_reason(exc)}")
            continue
        if result.created:
            stored += 1
        else:
            title = result.document.title
            messages.warning(request, f"{upload.name} is already stored as “{title}”; skipped.")
    if stored:
        messages.success(request, f"Stored {stored} file{pluralize(stored)}; ingesting now.")
    if pages:
        messages.success(request, f"Added {pages} web page{pluralize(pages)}; fetching now.")
    if not request.htmx:
        return redirect("console:knowledge-base", kb_id=kb.id)
    context = {"kb": kb, **_document_page(request, kb)}
    return render(request, "console/knowledge/document-list.html", context)


def _store_urls(request, kb, urls: list[str]) -> int:
    """Store each web page address; refused ones and duplicates are reported one by one."""
    stored = 0
    for url in urls:
        try:
            result = document_from_url(kb=kb, url=url, actor=actor(request))
        except ApplicationError as exc:
            messages.error(request, f"{url} was refused: {_reason(exc)}")
            continue
        if result.created:
            stored += 1
        else:
            messages.warning(request, f"{url} is already stored as “{result.document.title}”.")
    return stored


@role_required(CURATOR)
@require_POST
def knowledge_base_text(request, kb_id):
    """Store pasted text as a document; the form #paste-text comes back, with the list."""
    kb = _found(knowledge_base_by_id, kb_id=kb_id)
    form = PasteTextForm(request.POST)
    if form.is_valid():
        try:
            result = document_from_text(kb=kb, actor=actor(request), **form.cleaned_data)
        except ApplicationError as exc:
            form.add_error("text" if exc.message.startswith("text:") else None, _reason(exc))
        else:
            if result.created:
                messages.success(request, f"Stored “{result.document.title}”; ingesting it.")
            else:
                messages.warning(
                    request, f"This text is already stored as “{result.document.title}”."
                )
            if not request.htmx:
                return redirect("console:knowledge-base", kb_id=kb.id)
            form = PasteTextForm()
    if request.htmx:
        context = {"kb": kb, "form": form, "refresh_list": True, **_document_page(request, kb)}
        return render(request, "console/knowledge/paste-text.html", context)
    return render_documents(request, kb, form)


@role_required(CURATOR)
def document_detail(request, document_id):
    """A document: metadata, and #document-state (status and chunks), polled while it ingests."""
    doc = _found(document_by_id, document_id=document_id)
    chunks = paginate(request, chunk_list(document=doc), per_page=CHUNK_PAGE)
    context = {
        "document": doc,
        "page": chunks,
        "query": query_without_page(request),
        "polling": doc.status in IN_PROGRESS,
    }
    return render_page_or_fragment(
        request, "console/knowledge/document.html", "document-state", context
    )


@role_required(CURATOR)
@require_POST
def document_reindex_post(request, document_id):
    doc = document_reindex(
        document=_found(document_by_id, document_id=document_id), actor=actor(request)
    )
    messages.success(request, f"Re-indexing “{doc.title}”; its chunks leave search until done.")
    if not request.htmx:
        return redirect("console:knowledge-document", document_id=doc.id)
    chunks = paginate(request, chunk_list(document=doc), per_page=CHUNK_PAGE)
    context = {"document": doc, "page": chunks, "polling": True}
    return render(request, "console/knowledge/document-state.html", context)


@role_required(CURATOR)
@require_POST
def document_delete_post(request, document_id):
    doc = _found(document_by_id, document_id=document_id)
    kb = doc.knowledge_base
    try:
        document_delete(document=doc, actor=actor(request))
    except NotFound:
        messages.info(request, f"“{doc.title}” was deleted meanwhile, by another request.")
    else:
        messages.success(request, f"Deleted “{doc.title}” with its chunks.")
    return redirect("console:knowledge-base", kb_id=kb.id)


def render_documents(request, kb, form, *, extra: dict | None = None, status: int = 200):
    """The knowledge base page (or its #document-list), with the search form of
    knowledge_search unless extra brings a bound one."""
    context = {
        "kb": kb,
        "form": form or PasteTextForm(),
        "max_upload_bytes": settings.KNOWLEDGE_MAX_UPLOAD_BYTES,
        "search": KnowledgeSearchForm(kb=kb),
        **_document_page(request, kb),
        **(extra or {}),
    }
    return render_page_or_fragment(
        request, "console/knowledge/knowledge-base.html", "document-list", context, status=status
    )


def _document_page(request, kb) -> dict:
    """Context of #document-list: a page of documents, and whether to poll for progress."""
    asked = request.GET.get("status") or None
    status = asked if asked in DocumentStatus.values else None
    page = paginate(request, document_list(kb=kb, status=status))
    problem = None
    if asked is not None and status is None:
        choices = ", ".join(DocumentStatus.values)
        problem = f"status={asked}: no such document status; choose {choices}. Showing all."
    return {
        "status": status,
        "status_problem": problem,
        "page": page,
        "query": query_without_page(request),
        "counts": knowledge_base_status_counts(kb=kb),
        "polling": any(doc.status in IN_PROGRESS for doc in page),
    }


def _found(selector, **kwargs):
    """Call a selector that raises NotFound, and answer 404 for it."""
    try:
        return selector(**kwargs)
    except NotFound as exc:
        raise Http404(exc.message) from None


def _reason(exc: ApplicationError) -> str:
    """The service's message without the API field prefix ("file: ", "text: ", "url: ")."""
    message = exc.message.removeprefix("file: ").removeprefix("text: ").removeprefix("url: ")
    return message[:1].upper() + message[1:]


urlpatterns = [
    path("knowledge/", knowledge, name="knowledge"),
    path("knowledge/<uuid:kb_id>/", knowledge_base_detail, name="knowledge-base"),
    path(
        "knowledge/<uuid:kb_id>/delete/", knowledge_base_delete_view, name="knowledge-base-delete"
    ),
    path("knowledge/<uuid:kb_id>/upload/", knowledge_base_upload, name="knowledge-upload"),
    path("knowledge/<uuid:kb_id>/text/", knowledge_base_text, name="knowledge-text"),
    path("knowledge/documents/<uuid:document_id>/", document_detail, name="knowledge-document"),
    path(
        "knowledge/documents/<uuid:document_id>/reindex/",
        document_reindex_post,
        name="knowledge-document-reindex",
    ),
    path(
        "knowledge/documents/<uuid:document_id>/delete/",
        document_delete_post,
        name="knowledge-document-delete",
    ),
]
