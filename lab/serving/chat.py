"""The chat template `lab serve` puts in front of a base model (chapter 14).

GPT-2 was never trained to chat: a chat endpoint is a completion endpoint plus a template that writes the
conversation as one text, and a stop string where the next user turn would begin. This is that template, in
plain text so a reader sees all of it (no special tokens: the course models have none for turns):

    {system}                      <- only when there is a system message
    User: {content}
    Assistant: {content}
    ...
    User: {content}
    Assistant:                    <- the model writes from here; it stops before "\\nUser:"
"""

from __future__ import annotations

TEMPLATE = "{system}\\n\\nUser: {user}\\nAssistant: {assistant}\\nUser: {user}\\nAssistant:"
STOP = ["\nUser:"]
SPEAKERS = {"user": "User", "assistant": "Assistant"}


def render(messages: list[dict]) -> str:
    """The one text the model reads for `messages` ({"role", "content"} with content already plain text)."""
    parts = []
    for m in messages:
        if m["role"] in ("system", "developer"):
            parts.append(f"{m['content']}\n\n")
        else:
            parts.append(f"{SPEAKERS[m['role']]}: {m['content']}\n")
    return "".join(parts) + "Assistant:"
