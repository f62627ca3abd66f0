"""The base every handle shares, and what it needs of its run (`Owner`).

A handle talks to its run through two small seams: the run's pipeline (`agui._emit.pipeline`), the
one way its events leave and where it is held open, and an `Owner`, the run's state and its
publishing (a `RunContext` is one). Text a handle is given is refused where it is written when
it is not text, or not valid Unicode (a lone surrogate cannot be encoded as UTF-8, so it would
only fail later, at the encoder, with the block still open).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping
from types import CodeType, FrameType, TracebackType
from typing import Generic, Literal, NoReturn, Protocol, TypeVar

from pydantic import BaseModel, ValidationError
from typing_extensions import Self

from agui._emit.pipeline import Pipeline
from agui._protocol.text import unicode_problem
from agui._util.wording import with_article
from agui.errors import UsageError
from agui.events import Event, ReasoningEncryptedValueEvent
from agui.wire import misfits

__all__ = ["Handle", "Owner", "built"]

S = TypeVar("S")
M = TypeVar("M", bound=BaseModel)
S_co = TypeVar("S_co", covariant=True)
_log = logging.getLogger("agui")


class Owner(Protocol[S_co]):
    """What a handle needs of its run besides the pipeline: the state, and publishing it.

    A `RunContext` is one.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r", state={"n": 1}))
        >>> owner: Owner[object] = ctx
        >>> owner.state
        {'n': 1}
    """

    @property
    def state(self) -> S_co:
        """The run's live state."""
        ...

    def publish_state(self) -> None:
        """Send the state if it changed."""
        ...


def whole_text(value: object, call: str) -> str:
    r"""`value`, the text of a whole message `call` sends; refused before anything is sent.

    Examples:
        >>> whole_text("Hi", "ctx.say()")
        'Hi'
        >>> whole_text(None, "ctx.say()")
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: ctx.say() takes text (a str), not NoneType
    """
    if not isinstance(value, str):
        message = f"{call} takes text (a str), not {type(value).__name__}"
        raise UsageError(message)
    problem = unicode_problem(value)
    if problem is not None:
        raise UsageError(_not_unicode(f"the text given to {call}", problem))
    return value


def _not_unicode(what: str, problem: str) -> str:
    return (
        f"{what} is not valid Unicode: {problem}; AG-UI text travels as UTF-8, which cannot "
        "encode it; decode the source with errors='replace', or drop the surrogate"
    )


def built(cls: type[M], call: str, arguments: Mapping[str, str], /, **fields: object) -> M:
    """`cls(**fields)`, validated; a value that does not fit it is the caller's `UsageError`.

    The message names each misfit by the argument of `call` it came in as (`arguments` maps a
    field to that name), where pydantic's own error would name the event's field.

    Examples:
        >>> from agui.events import StepStartedEvent
        >>> built(StepStartedEvent, "ctx.step()", {"step_name": "name"}, step_name=3)
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: ctx.step(): the name given (an int) does not fit: Input should ...
    """
    try:
        return cls(**fields)
    except ValidationError as error:
        listed = "; ".join(
            _misfit(pointer, detail, arguments, fields)
            for pointer, detail in misfits(fields, error)
        )
        message = f"{call}: {listed}"
        raise UsageError(message) from None


def _misfit(
    pointer: str, detail: str, arguments: Mapping[str, str], fields: Mapping[str, object]
) -> str:
    _, field, *inside = pointer.split("/")
    argument = arguments.get(field, field)
    if inside:
        return f"the {argument} given does not fit at /{'/'.join(inside)}: {detail}"
    kind = type(fields.get(field)).__name__
    return f"the {argument} given ({with_article(kind)}) does not fit: {detail}"


class Handle(Generic[S]):
    """What every handle shares: the run's state, publishing it, raw emits, and `with`.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r", state={"n": 0}))
        >>> with ctx.message() as message:
        ...     message.state["n"] += 1
        ...     message.publish_state()
        >>> [event.type for event in events.drain()]
        ['TEXT_MESSAGE_START', 'STATE_SNAPSHOT', 'TEXT_MESSAGE_END']
    """

    kind: str = "block"
    nests: bool = False
    """Whether blocks of this kind nest (steps) rather than exclude each other."""

    def __init__(self, owner: Owner[S], pipeline: Pipeline[Handle[S]]) -> None:
        self._owner = owner
        self._pipeline = pipeline
        self._open = True
        self._ending = False
        self._opened_in = _caller()

    @property
    def opened_at(self) -> tuple[str, int]:
        """The file and line of the code that opened this block (for the unclosed warning).

        Examples:
            >>> from agui import RunAgentInput, RunContext
            >>> ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
            >>> scope = {"ctx": ctx}
            >>> exec(compile("step = ctx.step('plan')", "agent.py", "exec"), scope)
            >>> scope["step"].opened_at
            ('agent.py', 1)
        """
        code, offset = self._opened_in
        return code.co_filename, _line_at(code, offset)

    @property
    def closed(self) -> bool:
        """Whether the closing event has gone out."""
        return not self._open

    @property
    def state(self) -> S:
        """The run's live state (the same object as `ctx.state`)."""
        return self._owner.state

    def publish_state(self) -> None:
        """Publish the run's state now, while this block is open (as `RunContext.publish_state`)."""
        self._check_open("publish_state")
        self._owner.publish_state()

    def emit(self, event: Event) -> None:
        """Emit any event through the run's transformers and verifier."""
        self._check_open("emit")
        self._pipeline.send(event)

    def describe(self) -> str:
        """A short name for messages, such as `tool call 'r-call-1' (get_weather)`."""
        return self.kind

    def close(self) -> None:
        """Emit the closing event, unless it has gone out already."""
        if self._open:
            self._end_now()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._open:
            return
        if exc is None:
            self._end_now()
            return
        try:
            self.close()
        except Exception:  # noqa: BLE001 - the error already propagating must win
            _log.exception("closing %s failed while an error propagated", self.describe())
            self._pipeline.release(self)

    @property
    def abandoned(self) -> bool:
        """Whether the block is open and nothing ever tried to end it (the run driver warns).

        Examples:
            >>> from agui import RunAgentInput, RunContext
            >>> ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
            >>> message = ctx.message()
            >>> message.abandoned
            True
            >>> message.end()
            >>> message.abandoned
            False
        """
        return self._open and not self._ending

    def _end_now(self) -> None:
        self._ending = True
        self._finish()

    def _finish(self) -> None:
        raise NotImplementedError

    def _start(self, *events: Event) -> None:
        """Hold this block open and send its opening events; a refused opening leaves it shut."""
        pipeline = self._pipeline
        pipeline.open(self)
        try:
            self._send_opening(events)
        except BaseException:
            self._open = False
            pipeline.release(self)
            raise

    def _send_opening(self, events: tuple[Event, ...]) -> None:
        """Send the opening events: only the first may be refused for cancellation."""
        for index, event in enumerate(events):
            self._pipeline.send(event, forced=index > 0)

    def _send_encrypted(
        self, subtype: Literal["message", "tool-call"], entity_id: str, value: str
    ) -> None:
        """Send an opaque value the client stores on this block (`encrypted_value()`)."""
        self._check_open("encrypted_value")
        self._check_unicode(value, "the value given to encrypted_value() on {handle}")
        event = built(
            ReasoningEncryptedValueEvent,
            f"encrypted_value() on {self.describe()}",
            {"encrypted_value": "value"},
            subtype=subtype,
            entity_id=entity_id,
            encrypted_value=value,
        )
        self._pipeline.send(event)

    def _check_open(self, action: str) -> None:
        if not self._open:
            self._refuse(action)

    def _refuse(self, action: str) -> NoReturn:
        message = (
            f"cannot call {action}() on {self.describe()}: it has ended; "
            "open a new block for more output"
        )
        raise UsageError(message)

    def _text(self, action: str, value: object) -> str:
        """What a delta's quick check left: refused on an ended block, non-text or non-Unicode."""
        if not self._open:
            self._refuse(action)
        if not isinstance(value, str):
            message = (
                f"{action}() on {self.describe()} takes text (a str), not {type(value).__name__}"
            )
            raise UsageError(message)
        text = str.__str__(value)  # a str subclass's text as a plain str, as the model makes it
        self._check_unicode(text, f"the text given to {action}() on {{handle}}")
        return text

    def _check_unicode(self, text: object, what: str) -> None:
        """Refuse text that UTF-8 cannot encode; nothing has been sent.

        `what` says what the text is, `{handle}` standing for this handle's description: the
        message is only made when the text is refused.
        """
        problem = unicode_problem(text)
        if problem is not None:
            raise UsageError(_not_unicode(what.format(handle=self.describe()), problem))

    def _closed(self) -> None:
        self._open = False
        self._pipeline.release(self)


_frame_at: Callable[[int], FrameType] = vars(sys)["_getframe"]
"""`sys._getframe`: it reaches an outer frame directly, where `inspect.currentframe()` and
`f_back` would make an object of every frame in between, several times the cost on every open."""


def _opens_for_caller(module: object) -> bool:
    """Whether a frame of `module` opens a handle for its caller: the handles' own, the context."""
    return module == "agui.context" or (type(module) is str and module.startswith("agui.handles."))


def _caller() -> tuple[CodeType, int]:
    """Where the code that opened a handle is: its code and the offset of its current instruction.

    That is the first frame that is not an opener's. Called from `Handle.__init__`, whose caller
    is a handle's own `__init__`, whose caller is an opener (`ctx.message()`) or the code itself:
    the search starts there. The line is found from the offset only when it is asked for
    (`_line_at`): a frame's `f_lineno` scans its code's line table, a cost that grows with the
    function, on every open.
    """
    try:
        frame = _frame_at(3)
    except (
        ValueError
    ):  # pragma: no cover - only from a program's outermost frame (a subprocess test)
        frame = _frame_at(2)
    # The name first: reading `f_back` makes an object of the frame behind, which the agent's
    # coroutine then holds to its end (about 0.25 KiB a stream).
    while _opens_for_caller(frame.f_globals.get("__name__")) and frame.f_back is not None:
        frame = frame.f_back
    return frame.f_code, frame.f_lasti


def _line_at(code: CodeType, offset: int) -> int:
    """The line of the instruction at `offset` in `code`, as the frame's `f_lineno` said then."""
    lines = code.co_lines()
    found = (line for start, end, line in lines if start <= offset < end and line is not None)
    return next(found, code.co_firstlineno)
