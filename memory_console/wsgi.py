"""The WSGI application, loaded once in each web server worker."""

import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_console.settings")
application = get_wsgi_application()

# Import every view now rather than on the worker's first request.
url_patterns = get_resolver().url_patterns
# What is alive now (Django, the apps, their modules and URL patterns) lives as long as the
# worker. Frozen, it is no longer walked by each full cyclic garbage collection, which otherwise
# stalls a request for tens of milliseconds every few hundred requests.
gc.freeze()
