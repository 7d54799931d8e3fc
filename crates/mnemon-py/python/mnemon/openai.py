"""One orchestrator turn through an OpenAI-compatible client.

``run_turn(m, client, "...", model="gpt-4o")`` does what the design's
orchestrator does each turn: it assembles the best context for the user's
message under what the window has room for (the answer's tokens kept
aside), sends it with the message, records both turns once an answer came
back, reports the server's prompt count as usage, and returns the answer
with the window after it. Nothing is recorded when the call fails.

It needs only an object shaped like ``openai.OpenAI`` (``client.chat.
completions.create``), so the ``openai`` package is not a dependency of
mnemon.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from ._records import Status, Window

if TYPE_CHECKING:  # pragma: no cover
    from . import Mnemon

#: Tokens kept for the answer when ``max_tokens`` is not given.
DEFAULT_ANSWER_TOKENS = 1024


@dataclass(frozen=True)
class Turn:
    """An answered turn."""

    #: The model's answer.
    answer: str
    #: The agent's window after both turns were recorded and usage reported.
    window: Window
    #: Exact tokens of what was sent, with the project's tokenizer.
    prompt_tokens: int
    #: What the server counted for the prompt, when it said.
    server_prompt_tokens: Optional[int]
    #: Why the answer stopped (``stop``, ``length``).
    finish_reason: Optional[str]
    #: The server refused the first request for length and a smaller one was sent.
    retried: bool
    #: The messages that were sent.
    messages: List[Dict[str, Any]] = field(repr=False)
    #: The client's response object, untouched.
    response: Any = field(repr=False)


def run_turn(
    m: "Mnemon",
    client: Any,
    user_message: str,
    *,
    model: str,
    max_tokens: Optional[int] = None,
    preset: str = "conversation",
    budget: Optional[int] = None,
    **create: Any,
) -> Turn:
    """Runs one turn; ``create`` is passed to ``chat.completions.create``
    (``temperature``, ``tools``...). ``budget`` caps the context below what
    the window leaves."""
    if not user_message.strip():
        from . import InputError

        raise InputError("the user's message is empty")
    answer_tokens = max_tokens if max_tokens is not None else DEFAULT_ANSWER_TOKENS
    status = m.status()
    user = {"role": "user", "content": user_message}
    # What the context may take: the window less the answer's tokens, in
    # the server's tokens as far as reported usage has taught mnemon (its
    # calibration), less the message's own tokens with their framing.
    calibration = max(1.0, status.calibration or 1.0)
    user_tokens = m.count_chat([user])
    room = int((status.window.effective_max - answer_tokens) / calibration) - user_tokens
    if budget is not None:
        room = min(room, budget)
    if room <= 0:
        from . import InputError

        raise InputError(
            f"the window ({status.window.effective_max} tokens) leaves no room for a context "
            f"beside the message and {answer_tokens} answer tokens: lower max_tokens"
        )
    retried = False
    while True:
        ctx = m.context(budget=room, query=user_message, preset=preset, format="messages")
        messages: List[Dict[str, Any]] = [dict(x) for x in ctx.messages] + [user]
        prompt_tokens = m.count_chat(messages)
        try:
            response = client.chat.completions.create(
                model=model, messages=messages, max_tokens=answer_tokens, **create
            )
            break
        except Exception as e:  # noqa: BLE001 - only a refusal for length is retried
            over = _over_length(e)
            if over is None or retried:
                raise
            # The server counts more tokens than mnemon's tokenizer does (an
            # estimate, or another model's): send a context smaller by how
            # far over it was, once.
            retried = True
            server_prompt, server_window = over
            if server_prompt and server_window:
                target = prompt_tokens * (server_window - answer_tokens) / server_prompt * 0.95
                room = min(int(target) - user_tokens, int(room * 0.9))
            else:
                room = int(min(room, prompt_tokens) * 0.75)
            if room <= 0:
                raise
    choice = response.choices[0]
    answer = choice.message.content or ""
    m.message("user", user_message)
    m.message("assistant", answer)
    usage = getattr(response, "usage", None)
    server = getattr(usage, "prompt_tokens", None) if usage is not None else None
    after: Status = m.status()
    # Recording the turn may have refreshed a full window: the context the
    # provider counted is then gone, and its count says nothing of the new
    # one (mnemon would refuse it), so it is reported only while the epoch
    # the context was sent in lasts.
    if server and after.epoch == status.epoch:
        after = m.report_usage(server)
    return Turn(
        answer=answer,
        window=after.window,
        prompt_tokens=prompt_tokens,
        server_prompt_tokens=server,
        finish_reason=getattr(choice, "finish_reason", None),
        retried=retried,
        messages=messages,
        response=response,
    )


_TOKENS = re.compile(r"(\d[\d,]*)\s*tokens")


def _over_length(e: BaseException) -> Optional[Tuple[Optional[int], Optional[int]]]:
    """When ``e`` is a server's refusal of a prompt for its length (OpenAI's
    ``context_length_exceeded``, llama.cpp's "exceeds the available context
    size"): the prompt's tokens and the window as the server counted them,
    where its message says; else ``None``."""
    if getattr(e, "status_code", None) not in (400, 413):
        return None
    text = str(getattr(e, "message", "") or e)
    code = getattr(e, "code", None)
    lowered = text.lower()
    if code != "context_length_exceeded" and not (
        "context" in lowered and ("exceed" in lowered or "maximum" in lowered)
    ):
        return None
    counts = [int(n.replace(",", "")) for n in _TOKENS.findall(text)]
    if len(counts) >= 2 and min(counts) > 0:
        return max(counts), min(counts)
    return None, None
