"""Static file names for templates: hashed once collected, plain before."""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class ManifestOrSourceStaticFilesStorage(CompressedManifestStaticFilesStorage):
    """Whitenoise's hashed, compressed files; the plain names while nothing is collected.

    The manifest storage alone makes every page that links a static file a 500 until
    collectstatic has run, so `migrate` then `runserver` would not give a working console.
    Without a manifest, settings.WHITENOISE_USE_FINDERS has whitenoise serve the plain names
    from the source folders; `collectstatic` writes the manifest, and a server started after
    it links the hashed names, cached for ever.
    """

    def load_manifest(self):
        self.collected = self.read_manifest() is not None
        return super().load_manifest()

    def stored_name(self, name):
        if not self.collected:
            return name
        return super().stored_name(name)
