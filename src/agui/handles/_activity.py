"""The activity: one activity message whose content the agent keeps and the client mirrors.

AG-UI's activity messages are UI-only messages of an application's own type (a plan, a progress
card, a search in flight): `ACTIVITY_SNAPSHOT` creates one with its whole content,
`ACTIVITY_DELTA` changes it with an RFC 6902 JSON Patch. Written by hand, the agent must keep
the content, diff it and word the patch, and a patch against content the client does not hold
fails in the browser. An `Activity` keeps the content as it was last sent: it sends the snapshot
when it is made, and each `publish()` after sends the patch from that content to the live one
(`agui.patch.diff`); `patch(ops)` applies operations the agent words itself, refusing with
`PatchError` (nothing sent) those that do not apply. Its events go through the run's pipeline
like any other, so they are verified, and inside a subagent they carry its `subagentRunId`.

It is not a block: activity events are unordered in AG-UI, so an activity stays live for the
whole run, beside whatever else is open.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import cast

from pydantic import JsonValue, TypeAdapter, ValidationError

from agui import patch
from agui.errors import PatchError, UsageError
from agui.events import ActivityDeltaEvent, ActivitySnapshotEvent, Event

__all__ = ["Activity", "ActivityOpener"]

JsonObject = dict[str, JsonValue]
_OBJECT: TypeAdapter[JsonObject] = TypeAdapter(JsonObject)


class Activity:
    """One activity message: its content, sent as a snapshot first and as patches after.

    Build it with `ctx.activity(activity_type, content)`, which sends the snapshot. Change
    `content` in place (or assign a new one) and `publish()`, or hand `patch()` the operations.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> progress = ctx.activity("progress", {"done": 0, "total": 2})
        >>> progress.content["done"] = 1
        >>> progress.publish()
        >>> progress.patch([{"op": "replace", "path": "/done", "value": 2}])
        >>> for event in events.drain():
        ...     print(event.model_dump_json())
        {"type":"ACTIVITY_SNAPSHOT","messageId":"r-msg-1","activityType":"progress","content":{"done":0,"total":2}}
        {"type":"ACTIVITY_DELTA","messageId":"r-msg-1","activityType":"progress","patch":[{"op":"replace","path":"/done","value":1}]}
        {"type":"ACTIVITY_DELTA","messageId":"r-msg-1","activityType":"progress","patch":[{"op":"replace","path":"/done","value":2}]}
    """

    def __init__(
        self,
        send: Callable[[Event], None],
        message_id: str,
        activity_type: str,
        content: Mapping[str, JsonValue] | None = None,
    ) -> None:
        if not isinstance(cast("object", activity_type), str) or not activity_type:
            message = (
                f"ctx.activity() takes the activity's type as non-empty text (say 'progress'), "
                f"not {activity_type!r}; the client picks the renderer by it"
            )
            raise UsageError(message)
        self._send = send
        self.id = message_id
        """The activity message's id."""
        self.activity_type = activity_type
        """The application's name for this kind of activity; the client renders by it."""
        self._sent = self._checked({} if content is None else content)
        self.content: JsonObject = _OBJECT.validate_python(self._sent)
        """The live content: change it, then `publish()`."""
        self._send(
            ActivitySnapshotEvent(
                message_id=self.id, activity_type=activity_type, content=self._sent
            )
        )

    def publish(self) -> None:
        """Send the change from the content last sent to `content`, if any, as one patch."""
        current = self._checked(self.content)
        ops = patch.diff(self._sent, current)
        if ops:
            self._send_patch(ops, current)

    def patch(self, ops: Sequence[Mapping[str, JsonValue]]) -> None:
        """Apply RFC 6902 operations to the content and send them as they are.

        Raises:
            PatchError: an operation does not apply to the content; nothing is sent, and the
                content is left as it was.
        """
        self.publish()  # the operations are worded against the content as the client holds it
        try:
            changed = patch.apply(self._sent, ops)
        except PatchError as error:
            message = (
                f"the patch given to activity {self.id!r} ({self.activity_type}) does not apply "
                f"to its content: {error}; word it against the content as it stands "
                "(activity.content), or change the content and publish() instead"
            )
            raise PatchError(message, index=error.index) from None
        current = self._checked(changed)
        self.content = _OBJECT.validate_python(current)
        self._send_patch([dict(op) for op in ops], current)

    def _send_patch(self, ops: list[dict[str, JsonValue]], current: JsonObject) -> None:
        delta = ActivityDeltaEvent.model_validate(
            {"messageId": self.id, "activityType": self.activity_type, "patch": ops}
        )
        self._send(delta)
        self._sent = current

    def _checked(self, content: object) -> JsonObject:
        """A copy of `content`, refused unless it is a JSON object."""
        try:
            return _OBJECT.validate_python(content)
        except ValidationError as error:
            where = error.errors()[0]
            path = "/".join(str(part) for part in where["loc"])
            message = (
                f"the content of activity {self.id!r} ({self.activity_type}) must be a JSON "
                f"object (a dict of str keys and JSON values): {where['msg'].lower()} at "
                f"'/{path}'; store ids, numbers and text, not Python objects"
            )
            raise UsageError(message) from None


class ActivityOpener:
    """What gives a run context its `activity()` opener: it sends through `emit`.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> isinstance(ctx, ActivityOpener), ctx.activity("plan").id
        (True, 'r-msg-1')
    """

    def activity(
        self,
        activity_type: str,
        content: Mapping[str, JsonValue] | None = None,
        *,
        message_id: str | None = None,
    ) -> Activity:
        """Start an activity message: its `ACTIVITY_SNAPSHOT` goes now; see `Activity`.

        `message_id` names an activity message the client already holds (one an earlier run
        made), which the snapshot then replaces; by default a new message id is minted.
        """
        message_id = message_id if message_id is not None else self._new_message_id()
        return Activity(self.emit, message_id, activity_type, content)

    def emit(self, event: Event, *, forced: bool = False) -> None:
        """Send one event through the run's pipeline (a run context's own `emit`)."""
        raise NotImplementedError

    def _new_message_id(self) -> str:
        raise NotImplementedError
