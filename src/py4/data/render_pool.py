"""Chat rendering in worker processes, in input order, with bounded work in flight.

Rendering (Jinja + tokenization per conversation) is the slow part of SFT packing:
about 340 smoke conversations per CPU-second here, so the campaign's 1.9M Dolci rows
want several processes. Batches go to a ``spawn`` process pool (no ``fork`` of a process
that may hold threads); at most ``2 x num_proc`` batches are in flight, so memory stays
bounded however long the stream, and results come back in submission order, so the
output is the same as with one process.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from py4.data.instructions import Conversation
from py4.data.pack_chat import Rendered, render_conversations

__all__ = ["rendered_batches"]

_WORKER: dict[str, Any] = {}


def _init_worker(tokenizer: Any, template_kwargs: dict[str, Any]) -> None:
    _WORKER["tokenizer"] = tokenizer
    _WORKER["kwargs"] = template_kwargs


def _render_batch(batch: list[Conversation], first_index: int) -> list[Rendered]:
    return render_conversations(_WORKER["tokenizer"], batch, _WORKER["kwargs"], first_index)


def rendered_batches(batches: Iterable[list[Conversation]], tokenizer: Any, template_kwargs: dict[str, Any],
                     num_proc: int = 1) -> Iterator[tuple[list[Conversation], list[Rendered]]]:
    """(batch, its rendered conversations) for each batch, in order.

    Raises what rendering raises (DataError naming the conversation) in the caller.
    """
    if num_proc <= 1:
        first = 0
        for batch in batches:
            yield batch, render_conversations(tokenizer, batch, template_kwargs, first)
            first += len(batch)
        return
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(num_proc, mp_context=context, initializer=_init_worker,
                               initargs=(tokenizer, template_kwargs))
    try:
        window: deque = deque()
        first = 0
        for batch in batches:
            window.append((batch, pool.submit(_render_batch, batch, first)))
            first += len(batch)
            if len(window) >= 2 * num_proc:
                done_batch, future = window.popleft()
                yield done_batch, future.result()
        while window:
            done_batch, future = window.popleft()
            yield done_batch, future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
