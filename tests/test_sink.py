"""EventReceiver: synchronous pushes, `drain()` for tests, `async for` for transports."""

from __future__ import annotations

import asyncio
import copy
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agui._emit.receiver import RunReceiver
from agui._emit.record import Item, Kind, Record
from agui.errors import UsageError
from agui.events import (
    CustomEvent,
    Event,
    ReasoningMessageContentEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
)
from agui.sink import EventReceiver
from agui.sse import encode_sse


def custom(n: int) -> CustomEvent:
    return CustomEvent(name="n", value=n)


def values(events: list[Event]) -> list[object]:
    return [event.value for event in events if isinstance(event, CustomEvent)]


def test_drain_on_an_empty_receiver_returns_an_empty_list() -> None:
    receiver = EventReceiver()
    assert receiver.drain() == []
    assert not receiver.closed


def test_drain_returns_pushed_events_in_order_and_empties_the_queue() -> None:
    receiver = EventReceiver()
    for n in range(3):
        receiver.push(custom(n))
    assert values(receiver.drain()) == [0, 1, 2]
    assert receiver.drain() == []


def test_close_marks_the_end_but_keeps_what_is_queued() -> None:
    receiver = EventReceiver()
    receiver.push(custom(1))
    receiver.close()
    assert receiver.closed
    assert values(receiver.drain()) == [1]


def test_an_event_pushed_after_close_is_refused_and_what_was_queued_stays() -> None:
    receiver = EventReceiver()
    receiver.push(custom(1))
    receiver.close()
    with pytest.raises(UsageError, match=r"cannot queue CUSTOM: this run's stream has ended"):
        receiver.push(custom(2))
    assert values(receiver.drain()) == [1]


def test_batches_hands_over_everything_queued_at_once_then_ends_when_closed() -> None:
    receiver = EventReceiver()
    for n in range(3):
        receiver.push(custom(n))
    receiver.close()

    async def read() -> list[list[object]]:
        return [values(batch) async for batch in receiver.batches()]

    assert asyncio.run(read()) == [[0, 1, 2]]


def test_async_iteration_yields_each_event_and_ends_once_closed_and_empty() -> None:
    receiver = EventReceiver()
    receiver.push(custom(1))
    receiver.push(custom(2))
    receiver.close()

    async def read() -> list[object]:
        return [event.value async for event in receiver if isinstance(event, CustomEvent)]

    assert asyncio.run(read()) == [1, 2]


def test_async_iteration_of_a_closed_empty_receiver_ends_at_once() -> None:
    receiver = EventReceiver()
    receiver.close()

    async def read() -> list[Event]:
        return [event async for event in receiver]

    assert asyncio.run(read()) == []


def test_a_waiting_reader_wakes_for_each_push_from_another_task() -> None:
    receiver = EventReceiver()

    async def write() -> None:
        for n in range(3):
            await asyncio.sleep(0)
            receiver.push(custom(n))
        await asyncio.sleep(0)
        receiver.close()

    async def read() -> list[list[object]]:
        writer = asyncio.ensure_future(write())
        batches = [values(batch) async for batch in receiver.batches()]
        await writer
        return batches

    assert asyncio.run(read()) == [[0], [1], [2]]


def test_pushes_made_before_the_reader_wakes_arrive_as_one_batch() -> None:
    receiver = EventReceiver()

    async def write() -> None:
        await asyncio.sleep(0)
        receiver.push(custom(1))
        receiver.push(custom(2))
        receiver.close()

    async def read() -> list[list[object]]:
        writer = asyncio.ensure_future(write())
        batches = [values(batch) async for batch in receiver.batches()]
        await writer
        return batches

    assert asyncio.run(read()) == [[1, 2]]


def test_a_reader_that_stops_early_leaves_no_waiter_behind() -> None:
    receiver = EventReceiver()

    async def read() -> None:
        reader = asyncio.ensure_future(anext(receiver.batches()))
        await asyncio.sleep(0)
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)

    asyncio.run(read())
    assert receiver._waiter is None  # pyright: ignore[reportPrivateUsage]
    receiver.push(custom(1))
    assert values(receiver.drain()) == [1]


def test_a_second_reader_while_one_waits_is_refused_and_the_first_still_reads() -> None:
    receiver = EventReceiver()

    async def read() -> list[list[object]]:
        first = asyncio.ensure_future(_batches_of(receiver))
        await asyncio.sleep(0)
        second = asyncio.ensure_future(anext(receiver.batches()))
        await asyncio.sleep(0)
        assert second.done()
        with pytest.raises(UsageError, match="already has a reader waiting on it"):
            second.result()
        receiver.push(custom(1))
        receiver.close()
        return await first

    assert asyncio.run(read()) == [[1]]


async def _batches_of(receiver: EventReceiver) -> list[list[object]]:
    return [values(batch) async for batch in receiver.batches()]


# -- deltas queued as records -------------------------------------------------------------------


def test_a_delta_pushed_as_a_record_is_drained_as_its_event() -> None:
    receiver = RunReceiver()
    receiver.push_record((Kind.TEXT_CONTENT, "m1", "Hi"))
    receiver.push_record((Kind.TOOL_ARGS, "c1", "{}"))
    receiver.push_record((Kind.REASONING_CONTENT, "m2", "hmm"))
    assert receiver.drain() == [
        TextMessageContentEvent(message_id="m1", delta="Hi"),
        ToolCallArgsEvent(tool_call_id="c1", delta="{}"),
        ReasoningMessageContentEvent(message_id="m2", delta="hmm"),
    ]


def test_a_start_or_end_pushed_as_a_record_is_drained_as_its_event() -> None:
    receiver = RunReceiver()
    receiver.push_record((Kind.TEXT_START, "m1", "user"))
    receiver.push_record((Kind.TEXT_END, "m1", ""))
    receiver.push_record((Kind.TOOL_END, "c1", ""))
    assert receiver.drain() == [
        TextMessageStartEvent(message_id="m1", role="user"),
        TextMessageEndEvent(message_id="m1"),
        ToolCallEndEvent(tool_call_id="c1"),
    ]


def test_items_hand_over_records_as_they_are_between_events_in_order() -> None:
    receiver = RunReceiver()
    receiver.push(custom(1))
    receiver.push_record((Kind.TEXT_CONTENT, "m1", "Hi"))
    receiver.push(custom(2))
    assert receiver.items() == [custom(1), (Kind.TEXT_CONTENT, "m1", "Hi"), custom(2)]
    assert receiver.items() == []


def test_item_batches_hand_over_records_and_batches_hand_over_events() -> None:
    async def read() -> tuple[list[list[Item]], list[list[Event]]]:
        raw, built = RunReceiver(), RunReceiver()
        for receiver in (raw, built):
            receiver.push_record((Kind.TEXT_CONTENT, "m1", "a"))
            receiver.push(custom(1))
            receiver.close()
        return (
            [batch async for batch in raw.item_batches()],
            [batch async for batch in built.batches()],
        )

    raw, built = asyncio.run(read())
    assert raw == [[(Kind.TEXT_CONTENT, "m1", "a"), custom(1)]]
    assert built == [[TextMessageContentEvent(message_id="m1", delta="a"), custom(1)]]


def test_a_record_pushed_while_a_reader_waits_wakes_it() -> None:
    async def read() -> list[list[Item]]:
        receiver = RunReceiver()

        async def later() -> None:
            await asyncio.sleep(0)
            receiver.push_record((Kind.TEXT_CONTENT, "m1", "a"))
            await asyncio.sleep(0)
            receiver.close()

        task = asyncio.create_task(later())
        batches = [batch async for batch in receiver.item_batches()]
        await task
        return batches

    assert asyncio.run(read()) == [[(Kind.TEXT_CONTENT, "m1", "a")]]


# -- a drained record is the object validation makes ------------------------------------------

# Text a handle accepts: no lone surrogates, which it refuses before queueing anything.
_texts = st.text(st.characters(exclude_categories=["Cs"]), max_size=8)
_ids = _texts.filter(bool)
_records = st.one_of(
    st.tuples(
        st.sampled_from([Kind.TEXT_CONTENT, Kind.TOOL_ARGS, Kind.REASONING_CONTENT]), _ids, _texts
    ),
    st.tuples(st.sampled_from([Kind.TEXT_END, Kind.TOOL_END]), _ids, st.just("")),
    st.tuples(st.just(Kind.TEXT_START), _ids, st.sampled_from(["assistant", "user", "system"])),
)


def _validated(record: Record) -> Event:
    """The record's event as a handle would have validated it (a start's name given as None)."""
    kind, entity_id, text = record
    if kind == Kind.TEXT_CONTENT:
        return TextMessageContentEvent(message_id=entity_id, delta=text)
    if kind == Kind.TOOL_ARGS:
        return ToolCallArgsEvent(tool_call_id=entity_id, delta=text)
    if kind == Kind.REASONING_CONTENT:
        return ReasoningMessageContentEvent(message_id=entity_id, delta=text)
    if kind == Kind.TEXT_END:
        return TextMessageEndEvent(message_id=entity_id)
    if kind == Kind.TOOL_END:
        return ToolCallEndEvent(tool_call_id=entity_id)
    return TextMessageStartEvent(message_id=entity_id, role=text, name=None)  # type: ignore[arg-type]


@given(_records)
def test_a_drained_record_is_the_event_validation_makes_and_frames_the_same(
    record: Record,
) -> None:
    receiver = RunReceiver()
    receiver.push_record(record)
    (built,) = receiver.drain()
    validated = _validated(record)
    assert type(built) is type(validated)
    assert built == validated
    assert list(built.__dict__.items()) == list(validated.__dict__.items())
    assert built.model_fields_set == validated.model_fields_set
    assert isinstance(built.model_fields_set, set)
    assert built.__pydantic_extra__ is built.__pydantic_private__ is None
    assert repr(built) == repr(validated)
    assert hash(built) == hash(validated)
    assert pickle.loads(pickle.dumps(built)) == validated  # noqa: S301 - our own bytes
    assert copy.deepcopy(built) == validated
    assert encode_sse(built) == encode_sse(validated)


@given(_records, st.integers(min_value=0, max_value=2**40))
def test_a_drained_event_copied_with_a_change_is_framed_with_the_change(
    record: Record, timestamp: int
) -> None:
    receiver = RunReceiver()
    receiver.push_record(record)
    (built,) = receiver.drain()
    changed = built.model_copy(update={"timestamp": timestamp})
    frame = encode_sse(_validated(record).model_copy(update={"timestamp": timestamp}))
    assert encode_sse(changed) == frame
    assert f'"timestamp":{timestamp}'.encode() in frame
    assert built.timestamp is None


def test_each_drained_record_gets_its_own_dict_and_a_fields_set_no_one_can_change() -> None:
    receiver = RunReceiver()
    receiver.push_record((Kind.TEXT_CONTENT, "m1", "a"))
    receiver.push_record((Kind.TEXT_CONTENT, "m1", "b"))
    first, second = receiver.drain()
    assert first.__dict__ is not second.__dict__
    with pytest.raises(UsageError, match="shared and read-only; copy it first"):
        first.model_fields_set.add("timestamp")
    assert second.model_fields_set == {"message_id", "delta"}
