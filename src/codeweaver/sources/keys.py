"""Which secrets are set, never their values: the settings' own and those sources read.

A source names the secret it reads where it registers (`SourceInfo.key`), so a plugin's
key is listed too, with no list to keep by hand.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from pydantic import SecretStr

from codeweaver.sources.base import source_infos

if TYPE_CHECKING:
    from codeweaver.config import Settings


def secret_is_set(settings: Settings, key: str) -> bool:
    """Whether the secret setting `key` has a value; an empty one counts as unset, as the
    sources treat it. A key `Settings` has no field for (a plugin's) is read from the
    environment variable of its name in capitals."""
    if key not in type(settings).model_fields:
        return bool(os.environ.get(key.upper()))
    value = getattr(settings, key)
    if isinstance(value, SecretStr):
        return bool(value.get_secret_value())
    return value is not None and value != ""


def key_status(settings: Settings) -> dict[str, bool]:
    """`NAME: set` for every secret (what `doctor` shows): the settings' own, then those
    of the registered sources, by name."""
    status = settings.key_status()
    for key in sorted({info.key for info in source_infos().values() if info.key}):
        status[key.upper()] = secret_is_set(settings, key)
    return status
