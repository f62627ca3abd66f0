# The Microsoft Agent Framework's client runs in an environment of its own (.venv-maf, made by
# scripts/setup-dev): it pins ag-ui-protocol<0.2, which the project's environment cannot hold.
# Neither type checker sees that environment, hence the two settings below for this file only.
# mypy: disable-error-code="import-not-found"
# pyright: basic, reportMissingImports=false
"""Drive agui's live examples with the Microsoft Agent Framework's `AGUIChatClient`.

Run by tests/test_maf.py with `.venv-maf/bin/python tests/maf/driver.py SCENARIO URL`; it prints
one JSON object, what the client ended with:

- `stream`: the travel question, streamed: the text updates and the answer they add up to.
- `session`: two turns of one `Agent` session on the travel example: both answers.
- `declared`: the task board with declaration-only tools: "delete 1" comes back as a call the
  client leaves to the app and an interrupt; the app resumes it approved.
- `executable`: the task board with `delete_task` a function the client runs itself: the client
  answers the call with its result and asks again, on its own.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from agent_framework import Agent, FunctionTool, Message
from agent_framework_ag_ui import AGUIChatClient, state_carrier

QUESTION = "What's the weather like in Paris and suggest some Italian restaurants?"
BOARD = {"tasks": [{"id": 1, "title": "buy milk", "done": False}]}
ID = {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
TITLE = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}


def declared(name: str, schema: dict[str, Any]) -> FunctionTool:
    """A tool the app declares and renders; the client never runs it."""
    return FunctionTool(name=name, description=f"The board's {name}", func=None, input_model=schema)


def calls(messages: list[Message]) -> list[dict[str, Any]]:
    """The function calls and results in a response's messages."""
    return [
        {"type": content.type, "callId": content.call_id, "name": content.name}
        for message in messages
        for content in message.contents
        if content.type in ("function_call", "function_result")
    ]


async def stream(url: str) -> dict[str, Any]:
    """The travel question, streamed update by update."""
    texts: list[str] = []
    finished: dict[str, Any] = {}
    async with AGUIChatClient(endpoint=url) as client:
        async for update in client.get_response(QUESTION, stream=True):
            if update.text:
                texts.append(update.text)
            if update.finish_reason is not None:
                finished = dict(update.additional_properties or {})
    return {"updates": len(texts), "text": "".join(texts), "outcome": finished.get("outcome")}


async def session(url: str) -> dict[str, Any]:
    """Two turns of one session: the agent sends the first turn's messages with the second."""
    async with AGUIChatClient(endpoint=url) as client:
        agent = Agent(name="traveller", client=client)
        conversation = agent.create_session()
        first = await agent.run("What's the weather in Rome?", session=conversation)
        second = await agent.run("And the weather in Paris?", session=conversation)
    return {"answers": [first.text, second.text]}


async def declared_tools(url: str) -> dict[str, Any]:
    """Declaration-only tools: the call comes back to the app, which resumes the interrupt."""
    tools = [declared("add_task", TITLE), declared("delete_task", ID)]
    history = [Message(role="user", contents=["delete 1"])]
    state = Message(role="user", contents=[state_carrier(BOARD)])
    async with AGUIChatClient(endpoint=url) as client:
        asked = await client.get_response([*history, state], options={"tools": tools})
        interrupts: list[dict[str, Any]] = (asked.additional_properties or {}).get("interrupts", [])
        resume = [
            {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}
            for interrupt in interrupts
        ]
        history += asked.messages
        answered = await client.get_response(
            [*history, state], options={"tools": tools, "resume": resume}
        )
    return {
        "asked": {"calls": calls(asked.messages), "interrupts": interrupts, "text": asked.text},
        "answered": {
            "calls": calls(answered.messages),
            "text": answered.text,
            "outcome": (answered.additional_properties or {}).get("outcome"),
        },
    }


async def executable_tools(url: str) -> dict[str, Any]:
    """`delete_task` as a function the client runs: its result answers the approval."""
    runs: list[dict[str, Any]] = []

    def delete_task(id: int) -> dict[str, Any]:  # noqa: A002 - the tool's argument name
        """Delete a task: the app asked the user, who said yes."""
        runs.append({"id": id})
        return {"approved": True}

    tools = [declared("add_task", TITLE), FunctionTool(name="delete_task", func=delete_task)]
    messages = [
        Message(role="user", contents=["delete 1"]),
        Message(role="user", contents=[state_carrier(BOARD)]),
    ]
    async with AGUIChatClient(endpoint=url) as client:
        response = await client.get_response(messages, options={"tools": tools})
    made = [call for call in calls(response.messages) if call["type"] == "function_call"]
    return {
        "localRuns": len(runs),
        "deleteCalls": sum(call["name"] == "delete_task" for call in made),
        "text": response.text,
        "outcome": (response.additional_properties or {}).get("outcome"),
    }


SCENARIOS = {
    "stream": stream,
    "session": session,
    "declared": declared_tools,
    "executable": executable_tools,
}


def main() -> None:
    """Run the scenario the command line names; print what the client ended with."""
    scenario, url = sys.argv[1], sys.argv[2]
    result = asyncio.run(SCENARIOS[scenario](url))
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
