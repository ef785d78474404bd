"""A vector column on both backends: pgvector's `vector` on PostgreSQL, float32 bytes on SQLite."""

import numpy as np
from django.db import models


class EmbeddingField(models.Field):
    """Holds one embedding as a float32 numpy array. The column has no fixed dimension, so
    vectors of several models can live side by side; queries cast to one dimension."""

    description = "An embedding vector"

    def db_type(self, connection):
        return "vector" if connection.vendor == "postgresql" else "blob"

    def get_db_prep_value(self, value, connection, prepared=False):
        if value is None:
            return None
        array = np.asarray(value, dtype=np.float32)
        if connection.vendor == "postgresql":
            return vector_literal(array)
        return array.tobytes()

    def from_db_value(self, value, expression, connection):
        if value is None:
            return None
        if isinstance(value, (bytes, memoryview)):
            return np.frombuffer(bytes(value), dtype=np.float32)
        return np.array(value.strip("[]").split(","), dtype=np.float32)


def vector_literal(array) -> str:
    """Return pgvector's text form of a vector: '[0.1,0.2,…]'."""
    return "[" + ",".join(f"{x:.7g}" for x in np.asarray(array, dtype=np.float32)) + "]"
