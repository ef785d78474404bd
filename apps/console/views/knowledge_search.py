"""Console page: search inside one knowledge base, as an agent of its project would.

It runs the API's search (POST /api/v1/search with scopes ["knowledge"] and knowledge_base set):
retrieve() over this base's chunks, with the chosen agent's fusion settings and
search_min_similarity floor, so a curator sees the hits, scores and signals the agent gets.
"""

import uuid

from django.shortcuts import render
from django.urls import path

from apps.console.kb_search import TOP_K_DEFAULT, KnowledgeSearchForm
from apps.console.roles import CURATOR, role_required
from apps.console.views.knowledge import _found, render_documents
from apps.knowledge.selectors import document_list, knowledge_base_by_id
from apps.retrieval.selectors import retrieve


@role_required(CURATOR)
def knowledge_base_search(request, kb_id):
    """The fragment #kb-search-results (the whole base page without htmx): hits of ?q= in this
    base with their score and signals; a bad parameter is a 400 naming it."""
    kb = _found(knowledge_base_by_id, kb_id=kb_id)
    form = KnowledgeSearchForm(request.GET or None, kb=kb)
    results = warnings = None
    if form.is_bound and form.is_valid():
        agent = form.cleaned_data["agent"]
        found = retrieve(
            agent=agent,
            query=form.cleaned_data["q"],
            scopes=["knowledge"],
            knowledge_base_id=kb.id,
            top_k=form.cleaned_data["top_k"] or TOP_K_DEFAULT,
        )
        results, warnings = found.hits, found.warnings
        ids = {hit.metadata["document_id"] for hit in results}
        titles = dict(document_list(kb=kb).filter(pk__in=ids).values_list("pk", "title"))
        for hit in results:
            hit.title = titles.get(uuid.UUID(hit.metadata["document_id"]), "")
    context = {"kb": kb, "search": form, "results": results, "warnings": warnings}
    status = 400 if form.is_bound and not form.is_valid() else 200
    if request.htmx:
        return render(request, "console/knowledge/kb-search-results.html", context, status=status)
    return render_documents(request, kb, None, extra=context, status=status)


urlpatterns = [
    path("knowledge/<uuid:kb_id>/search/", knowledge_base_search, name="knowledge-base-search"),
]
