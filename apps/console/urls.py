from django.contrib.auth import views as auth_views
from django.urls import path

from apps.console.views import (
    audit,
    config,
    contexts,
    dashboard,
    evaluation,
    keys,
    knowledge,
    knowledge_search,
    moderation,
    moderation_more,
    notes,
    threads,
    users,
    webhooks,
)

app_name = "console"

urlpatterns = [
    path(
        "login/",
        auth_views.LoginView.as_view(redirect_authenticated_user=False),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(next_page="console:login"), name="logout"),
    *dashboard.urlpatterns,
    *threads.urlpatterns,
    *contexts.urlpatterns,
    *knowledge.urlpatterns,
    *knowledge_search.urlpatterns,
    *moderation.urlpatterns,
    *moderation_more.urlpatterns,
    *notes.urlpatterns,
    *config.urlpatterns,
    *keys.urlpatterns,
    *webhooks.urlpatterns,
    *audit.urlpatterns,
    *users.urlpatterns,
    *evaluation.urlpatterns,
]
