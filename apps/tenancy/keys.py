"""API key format: mc_<prefix>_<secret>. The prefix finds the row; the hash proves the secret."""

import hashlib
import hmac
import secrets
import string

KEY_PREFIX_LENGTH = 10
_ALPHABET = string.ascii_lowercase + string.digits


def key_generate() -> tuple[str, str, str]:
    """Return (full key, prefix, hash of the full key)."""
    prefix = "".join(secrets.choice(_ALPHABET) for _ in range(KEY_PREFIX_LENGTH))
    key = f"mc_{prefix}_{secrets.token_urlsafe(32)}"
    return key, prefix, key_hash(key)


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def key_prefix(key: str) -> str | None:
    """Return the prefix of a well-formed key, else None."""
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != "mc" or len(parts[1]) != KEY_PREFIX_LENGTH or not parts[2]:
        return None
    if any(char not in _ALPHABET for char in parts[1]):
        return None
    return parts[1]


def key_matches(key: str, stored_hash: str) -> bool:
    return hmac.compare_digest(key_hash(key), stored_hash)
