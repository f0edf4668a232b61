"""The service's run queue as the settings call for it: in this process, or shared in Redis."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from codeweaver.api.queue import RunLine, RunQueue
from codeweaver.api.shared_queue import SharedRunQueue

if TYPE_CHECKING:
    from codeweaver.config import Settings
    from codeweaver.llm.remote import ModelServerInfo

logger = logging.getLogger(__name__)


def run_slots(settings: Settings) -> int:
    """Answers computed at once: the setting, else the in-process model's slots for a
    local model (llama.cpp decodes them together on every core) and eight for a remote
    one."""
    from codeweaver.llm.llama_runtime import IN_PROCESS_SLOTS

    if settings.api_concurrency is not None:
        return settings.api_concurrency
    return IN_PROCESS_SLOTS if settings.provider == "local" else 8


def queue_for(settings: Settings, slots: int | None = None) -> RunLine:
    """The run queue the settings describe: its slots (`slots` when the model server
    said how many answers it computes at once and no setting overrides it) and waiting
    places, kept in Redis when `CODEWEAVER_REDIS_URL` is set so replicas share them."""
    concurrency = settings.api_concurrency or slots or run_slots(settings)
    if settings.redis_url is not None:
        return SharedRunQueue(
            settings.redis_url.get_secret_value(), concurrency, settings.api_queue
        )
    return RunQueue(concurrency, settings.api_queue)


async def open_queue(settings: Settings) -> tuple[RunLine, ModelServerInfo | None]:
    """The service's run queue: sized by the model server when the model is behind one
    (asked now, and returned), its store checked, so a shared line in an unreachable
    Redis fails here rather than on the first question."""
    from codeweaver.api.health import probe_model

    model = await probe_model(settings)
    if model is not None and not model.reachable:
        logger.warning("model server: %s", model.error)
    queue = queue_for(settings, slots=model.concurrency if model else None)
    await queue.check_store()
    return queue, model
