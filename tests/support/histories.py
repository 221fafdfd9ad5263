"""Realistic conversations for stage-2 tests and benchmarks: questions, named agents,
tool-call pairs and tool outputs from a few lines to ~6,000 tokens (seeded, deterministic)."""

from __future__ import annotations

import json
import random

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

WORDS = (
    "the hero section uses espresso brown and cream colours; the button needs more contrast "
    "while the grid collapses on mobile, so we test the layout, fix the header, deploy the "
    "preview and check the briefing file before the handover returns to the orchestrator"
).split()


def sentence(rng: random.Random, low: int = 5, high: int = 18) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + rng.choice([".", ".", "?", "!"])


def tool_output(rng: random.Random, lines: int) -> str:
    out = []
    for i in range(lines):
        roll = rng.random()
        if roll < 0.4:
            out.append(f"{i:5d}  def {rng.choice(WORDS)}_{i}(x, y={rng.randint(0, 99)}):")
        elif roll < 0.7:
            out.append(f"2026-06-05T21:{i % 60:02d}:00Z INFO {sentence(rng)}")
        else:
            out.append(json.dumps({"id": i, "name": rng.choice(WORDS), "ok": i % 3 == 0}))
    return "\n".join(out)


def make_history(n: int, seed: int = 0) -> list[BaseMessage]:
    """A varied conversation: questions, named agents, tool-call pairs, long tool outputs."""
    rng = random.Random(seed)
    messages: list[BaseMessage] = [SystemMessage("You are the orchestrator. " + sentence(rng))]
    calls = 0
    while len(messages) < n:
        messages.append(HumanMessage(" ".join(sentence(rng) for _ in range(rng.randint(1, 3)))))
        agent = rng.choice(["orchestrator", "frontend_designer"])
        if rng.random() < 0.5:
            calls += 1
            tool = rng.choice(["read_file", "search", "run_tests"])
            call_id = f"call_{calls}"
            args = {"path": f"src/{rng.choice(WORDS)}.tsx"}
            call = {"name": tool, "args": args, "id": call_id}
            messages.append(AIMessage(sentence(rng), name=agent, tool_calls=[call]))
            output = tool_output(rng, rng.choice([2, 15, 80, 300]))
            messages.append(ToolMessage(output, name=tool, tool_call_id=call_id))
        reply = " ".join(sentence(rng) for _ in range(rng.randint(1, 8)))
        messages.append(AIMessage(reply, name=agent))
    return messages[:n]


class MessageCount:
    """Counts the LangChain message objects built while it is installed (`install`, with
    pytest's monkeypatch): the work of loading a thread, building views and replies."""

    def __init__(self) -> None:
        self.built = 0

    def install(self, monkeypatch) -> MessageCount:  # type: ignore[no-untyped-def]
        original = BaseMessage.__init__

        def counting(message, *args, **kwargs):  # type: ignore[no-untyped-def]
            self.built += 1
            original(message, *args, **kwargs)

        monkeypatch.setattr(BaseMessage, "__init__", counting)
        self._uninstall = lambda: monkeypatch.setattr(BaseMessage, "__init__", original)
        return self

    def uninstall(self) -> None:
        """Stop counting (the constructor as it was before `install`)."""
        self._uninstall()
