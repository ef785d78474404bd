"""Stop reading an uploaded file as soon as it passes the size limit.

An API request that declares a larger body is refused before any of it is read
(ApiBodyLimitMiddleware); this bounds the bytes read where that check does not apply, as in
the console's upload form. Django reads no body without a Content-Length, so a chunked upload
never gets this far.
"""

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, StopUpload


class SizeLimitUploadHandler(FileUploadHandler):
    """Count the bytes of each uploaded file and abort the upload past the limit.

    The request is marked (`upload_too_large`) so the view answers 413 instead of parsing on.
    """

    def __init__(self, request=None):
        super().__init__(request)
        self.received = 0

    def new_file(self, *args, **kwargs):
        super().new_file(*args, **kwargs)
        self.received = 0

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > settings.KNOWLEDGE_MAX_UPLOAD_BYTES:
            self.request.upload_too_large = True
            raise StopUpload(connection_reset=True)
        return raw_data

    def file_complete(self, file_size):
        return None
