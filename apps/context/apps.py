from django.apps import AppConfig


class ContextConfig(AppConfig):
    name = "apps.context"
    label = "context"
    verbose_name = "Context assembly"

    def ready(self):
        from apps.episodic.hooks import extraction_profile_requested
        from apps.profiles.selectors import profile_get

        def profile_text(sender, *, agent, resource, **kwargs) -> str:
            profile = profile_get(agent=agent, resource=resource) if resource else None
            return profile.content if profile else ""

        # Extraction (episodic) cannot read profiles, which sit beside it; context, above both,
        # hands it the profile it would show, so entries do not repeat it.
        extraction_profile_requested.connect(
            profile_text, dispatch_uid="context.extraction_profile", weak=False
        )
