"""Backend tools: schema from the signature, validation, execution and result content."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Annotated, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field, JsonValue

from agui import AgentError, RunAgentInput, RunContext, UsageError
from agui.agents import BackendTool, Toolbox, ToolLoopAgent, tool
from agui.agents.models import Call, ScriptedModel, Turn
from agui.agents.tools import ToolResult
from agui.errors import Cancelled, InvalidArguments
from agui.events import RunFinishedEvent, ToolCallResultEvent
from agui.testing import assert_valid, collect


class Address(BaseModel):
    city: str
    country: str = "FR"


class Board(BaseModel):
    tasks: list[str] = []


@dataclasses.dataclass
class Forecast:
    location: str
    temp_c: int


@tool
def get_weather(location: Annotated[str, Field(description="A city name")]) -> str:
    """Get the current weather for a city."""
    return f"sunny in {location}"


@tool(name="find_restaurants", description="Restaurants near a place.")
async def search_restaurants(location: str, cuisine: str = "any", limit: int = 3) -> list[str]:
    return [f"{cuisine} #{i} in {location}" for i in range(limit)]


@tool
def ship(address: Address, express: bool = False) -> dict[str, JsonValue]:  # noqa: FBT001, FBT002
    """Ship a parcel.

    Some more words about shipping.

    Args:
        address: Where the parcel goes,
            with its country.
        express: Whether to hurry.

    Returns:
        A receipt.
    """
    return {"to": address.city, "country": address.country, "express": express}


def _run(backend: BackendTool[..., object], arguments: str | dict[str, JsonValue]) -> ToolResult:
    return asyncio.run(backend.run(arguments))


# -- schema ------------------------------------------------------------------------------------


def test_the_schema_comes_from_the_signature_with_field_descriptions() -> None:
    assert get_weather.name == "get_weather"
    assert get_weather.description == "Get the current weather for a city."
    assert get_weather.parameters == {
        "type": "object",
        "properties": {"location": {"type": "string", "description": "A city name"}},
        "required": ["location"],
        "additionalProperties": False,
    }


def test_defaults_are_optional_and_name_and_description_may_be_given() -> None:
    spec = search_restaurants.spec

    assert (spec.name, spec.description) == ("find_restaurants", "Restaurants near a place.")
    assert spec.parameters == {
        "type": "object",
        "properties": {
            "location": {"type": "string"},
            "cuisine": {"type": "string", "default": "any"},
            "limit": {"type": "integer", "default": 3},
        },
        "required": ["location"],
        "additionalProperties": False,
    }


def test_nested_models_go_to_defs_and_the_docstring_args_describe_parameters() -> None:
    assert ship.description == "Ship a parcel.\n\nSome more words about shipping."
    assert ship.parameters == {
        "$defs": {
            "Address": {
                "properties": {
                    "city": {"type": "string"},
                    "country": {"type": "string", "default": "FR"},
                },
                "required": ["city"],
                "title": "Address",
                "type": "object",
            }
        },
        "type": "object",
        "properties": {
            "address": {
                "$ref": "#/$defs/Address",
                "description": "Where the parcel goes, with its country.",
            },
            "express": {"type": "boolean", "default": False, "description": "Whether to hurry."},
        },
        "required": ["address"],
        "additionalProperties": False,
    }


def test_an_explicit_field_description_wins_over_the_docstring() -> None:
    @tool
    def f(
        a: Annotated[int, Field(description="from Field")],
        b: int = Field(1, description="from default"),
    ) -> int:
        """Add.

        Args:
            - a list the parser does not read
            a: from docstring
            b: from docstring
        """
        return a + b

    properties = f.parameters["properties"]
    assert isinstance(properties, dict)
    assert properties["a"] == {"type": "integer", "description": "from Field"}
    assert properties["b"] == {"type": "integer", "default": 1, "description": "from default"}


def test_an_unannotated_parameter_takes_any_json_and_names_never_clash_with_pydantic() -> None:
    def untyped(json, schema: str, model_config: int = 0):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN202
        return [json, schema, model_config]  # pyright: ignore[reportUnknownVariableType]

    f = tool(cast("Callable[..., object]", untyped))

    assert f.parameters == {
        "type": "object",
        "properties": {
            "json": {},
            "schema": {"type": "string"},
            "model_config": {"type": "integer", "default": 0},
        },
        "required": ["json", "schema"],
        "additionalProperties": False,
    }
    assert _run(f, {"json": [1], "schema": "s"}).content == '[[1],"s",0]'


def test_a_tool_without_a_docstring_has_an_empty_description() -> None:
    @tool
    def nothing() -> None:
        pass

    assert nothing.description == ""
    assert nothing.parameters == {"type": "object", "properties": {}, "additionalProperties": False}


@pytest.mark.parametrize(
    "name", ["has space", "", "x" * 65, "dot.name"], ids=["space", "empty", "long", "dot"]
)
def test_a_name_providers_refuse_is_refused_at_decoration(name: str) -> None:
    with pytest.raises(UsageError, match="is not allowed"):
        tool(name=name)(lambda: None)


def test_what_is_not_a_function_is_refused_as_a_tool_at_decoration() -> None:
    with pytest.raises(UsageError, match=r"^a tool is a function, plain or async, not an int$"):
        tool(cast("Callable[..., object]", 42))


def _convert(amount: float, rate: float) -> float:
    """Convert an amount of money."""
    return amount * rate


class _Lookup:
    """Look a word up."""

    def __call__(self, word: str) -> str:
        """Look a word up."""
        return word.upper()


def test_a_partial_is_refused_as_a_tool_saying_to_write_a_function() -> None:
    with pytest.raises(
        UsageError,
        match=r"not a functools.partial of _convert: it has no name or docstring of its own, "
        r"and the keyword arguments it binds would stay in the schema for the model to change; "
        r"define a function that calls _convert with them",
    ):
        tool(name="convert")(functools.partial(_convert, rate=1.1))


def test_a_callable_object_is_refused_as_a_tool_and_its_bound_call_method_taken() -> None:
    with pytest.raises(
        UsageError,
        match=r"not a callable _Lookup object; pass its bound method, "
        r"tool\(name=...\)\(obj.__call__\), or make a method of _Lookup the tool with @tool",
    ):
        Toolbox([_Lookup()])

    lookup = tool(name="lookup")(_Lookup().__call__)

    assert (lookup.name, lookup.description) == ("lookup", "Look a word up.")
    assert _run(lookup, {"word": "ok"}) == ToolResult("OK")


def test_a_function_behind_a_wrapping_decorator_is_still_a_tool() -> None:
    @tool
    @functools.cache
    def square(n: int) -> int:
        """Square a number."""
        return n * n

    assert (square.name, square.description) == ("square", "Square a number.")
    assert _run(square, {"n": 3}) == ToolResult("9")


def test_a_generator_function_is_refused_as_a_tool_at_decoration() -> None:
    def numbers() -> Iterator[int]:
        yield 1

    async def words() -> AsyncIterator[str]:
        yield "a"

    for function in (numbers, words):
        with pytest.raises(UsageError, match=r"is a generator function, and a tool returns one"):
            tool(cast("Callable[..., object]", function))


def test_star_args_have_no_schema() -> None:
    def f(*args: int) -> int:
        return len(args)

    with pytest.raises(UsageError, match=r"\*args and \*\*kwargs have no schema"):
        tool(f).spec  # noqa: B018


def test_an_annotation_that_cannot_be_resolved_is_reported() -> None:
    def f(a: Missing) -> None:  # type: ignore[name-defined]  # noqa: F821
        pass

    with pytest.raises(UsageError, match="an annotation cannot be resolved"):
        tool(cast("Callable[..., object]", f)).parameters  # noqa: B018


# -- calling -----------------------------------------------------------------------------------


def test_running_a_tool_validates_and_converts_the_arguments() -> None:
    result = _run(ship, '{"address": {"city": "Lyon"}, "express": "true"}')

    assert result == ToolResult('{"to":"Lyon","country":"FR","express":true}')


def test_an_argument_the_tool_does_not_take_is_refused_so_the_model_can_correct_it() -> None:
    """Dropped, it would leave the model believing the tool honoured it (units, a date, ...)."""
    result = _run(get_weather, {"location": "Oslo", "unit": "C"})
    assert not result.ok
    assert result.content == (
        "Error: the arguments of tool 'get_weather' do not fit its signature: '/unit': Extra "
        "inputs are not permitted"
    )


def test_validate_lists_every_field_that_does_not_fit() -> None:
    with pytest.raises(InvalidArguments, match="do not fit its signature") as caught:
        ship.validate({"address": {"country": 3}, "express": "maybe"}, call_id="c1")

    assert caught.value.tool_call_id == "c1"
    assert caught.value.tool_name == "ship"
    assert [pointer for pointer, _ in caught.value.errors] == [
        "/address/city",
        "/address/country",
        "/express",
    ]


def test_validate_escapes_slashes_and_tildes_in_the_json_pointers_it_reports() -> None:
    """RFC 6901: a '~' in a key is written '~0' and a '/' is written '~1'."""

    @tool
    def tag(x: dict[str, int]) -> str:
        """Tag things."""
        return str(x)

    with pytest.raises(InvalidArguments, match=r"'/x/a~1b': Input should be a valid integer"):
        tag.validate({"x": {"a/b": "one"}})
    with pytest.raises(InvalidArguments) as caught:
        tag.validate({"x": {"a/b": "one", "~c": "two", "ok": 3}})

    assert [pointer for pointer, _ in caught.value.errors] == ["/x/a~1b", "/x/~0c"]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ("{not json", "are not JSON"),
        ('{"location": NaN}', "are not JSON"),
        ("[1, 2]", "must be a JSON object, not an array"),
        ("null", "must be a JSON object, not null"),
        ("{}", "'/location': Field required"),
    ],
    ids=["not json", "nan", "not an object", "null", "missing field"],
)
def test_arguments_the_tool_cannot_take_give_an_error_result_the_model_can_read(
    arguments: str, expected: str
) -> None:
    result = _run(get_weather, arguments)

    assert not result.ok
    assert result.content.startswith("Error: the arguments of tool 'get_weather'")
    assert expected in result.content


@pytest.mark.parametrize("raw", ["", " \n\t"], ids=["empty", "whitespace"])
def test_empty_argument_text_means_no_arguments(raw: str) -> None:
    @tool
    def ping() -> str:
        return "pong"

    assert _run(ping, raw).content == "pong"


def test_async_tools_are_awaited() -> None:
    assert (
        _run(search_restaurants, {"location": "Rome", "limit": 1}).content == '["any #0 in Rome"]'
    )


class _Status(BaseModel):
    ok: bool


@pytest.mark.parametrize(
    ("value", "content"),
    [
        ("plain", "plain"),
        ({"a": [1, None]}, '{"a":[1,null]}'),
        ([1, "two"], '[1,"two"]'),
        (_Status(ok=True), '{"ok":true}'),
        (Forecast("Paris", 21), '{"location":"Paris","temp_c":21}'),
        (None, "null"),
        (3.5, "3.5"),
    ],
    ids=["str", "dict", "list", "model", "dataclass", "none", "number"],
)
def test_return_values_become_result_content(value: object, content: str) -> None:
    @tool
    def give() -> object:
        return value

    assert _run(give, {}) == ToolResult(content)


def test_a_return_value_that_is_not_json_gives_an_error_result() -> None:
    @tool
    def give() -> object:
        return object()

    result = _run(give, {})

    assert result == ToolResult("Error: the tool 'give' returned no readable result", ok=False)


def test_a_return_value_holding_an_infinity_gives_an_error_result_and_a_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    @tool
    def give() -> object:
        return {"ratio": float("inf")}

    result = _run(give, {})

    assert result == ToolResult("Error: the tool 'give' returned no readable result", ok=False)
    assert "returned no readable result: it holds NaN or an infinity" in caplog.text


@pytest.mark.parametrize("value", ["caf\udce9", {"v": "caf\udce9"}], ids=["str", "dict"])
def test_a_return_value_holding_a_lone_surrogate_gives_an_error_result_and_a_log_line(
    value: object, caplog: pytest.LogCaptureFixture
) -> None:
    # Text decoded with errors="surrogateescape" (a file name, a subprocess's output) holds one.
    @tool
    def give() -> object:
        return value

    result = _run(give, {})

    assert result == ToolResult("Error: the tool 'give' returned no readable result", ok=False)
    assert "tool 'give' (call '') returned no readable result: " in caplog.text
    assert "surrogate" in caplog.text


def test_a_str_result_with_a_lone_surrogate_leaves_the_run_going_with_a_valid_stream() -> None:
    @tool
    def read_name() -> str:
        return "caf\udce9"

    model = ScriptedModel([Turn.tool_calls(Call("read_name")), Turn.text("Sorry.")])
    events = asyncio.run(
        collect(ToolLoopAgent(model, tools=[read_name]), RunAgentInput(thread_id="t", run_id="r"))
    )

    assert_valid(events)
    results = [event.content for event in events if isinstance(event, ToolCallResultEvent)]
    assert results == ["Error: the tool 'read_name' returned no readable result"]
    assert isinstance(events[-1], RunFinishedEvent)


def test_a_tool_that_raises_gives_an_error_result_without_the_exception_text() -> None:
    @tool
    def explode() -> str:
        message = "secret connection string"
        raise RuntimeError(message)

    result = _run(explode, {})

    assert result == ToolResult("Error: the tool 'explode' failed", ok=False)


def test_a_tool_may_expose_its_exception_text_to_the_model() -> None:
    @tool(expose_errors=True)
    def explode() -> str:
        message = "no such city"
        raise ValueError(message)

    result = _run(explode, {})

    assert result == ToolResult(
        "Error: the tool 'explode' failed: ValueError: no such city", ok=False
    )


class _SdkError(Exception):
    """An SDK's error whose text reads a payload member it may not have."""

    def __str__(self) -> str:
        payload = cast("dict[str, str]", self.args[0])
        return payload["detail"]


def test_an_exposed_exception_whose_text_cannot_be_made_is_named_by_its_type() -> None:
    @tool(expose_errors=True)
    def call_api() -> str:
        raise _SdkError({"code": "500"})

    result = _run(call_api, {})

    assert result == ToolResult("Error: the tool 'call_api' failed: _SdkError", ok=False)


def test_an_exposed_exception_text_with_a_lone_surrogate_shows_its_escape() -> None:
    @tool(expose_errors=True)
    def open_file() -> str:
        raise FileNotFoundError(2, "No such file", "caf\udce9.txt")

    result = _run(open_file, {})

    assert result == ToolResult(
        "Error: the tool 'open_file' failed: FileNotFoundError: [Errno 2] No such file: "
        "'caf\\udce9.txt'",
        ok=False,
    )


def test_a_sync_tool_that_raises_stop_iteration_gives_an_error_result_instead_of_hanging() -> None:
    @tool(expose_errors=True)
    def first_match() -> str:
        return next(iter([]))

    async def main() -> ToolResult:
        return await asyncio.wait_for(first_match.run({}), timeout=5)

    assert asyncio.run(main()) == ToolResult(
        "Error: the tool 'first_match' failed: RuntimeError: the tool raised StopIteration",
        ok=False,
    )


@pytest.mark.parametrize(
    "error",
    [KeyboardInterrupt(), SystemExit(3)],
    ids=["keyboard interrupt", "system exit"],
)
def test_a_base_exception_in_a_sync_tool_is_not_swallowed(error: BaseException) -> None:
    @tool
    def stop() -> str:
        raise error

    with pytest.raises(type(error)):
        _run(stop, {})


def test_a_tool_that_is_cancelled_propagates_the_cancellation() -> None:
    @tool
    async def wait() -> str:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        _run(wait, {})


def test_invalid_arguments_raised_by_the_tool_itself_are_a_result() -> None:
    @tool
    def picky() -> str:
        message = "city must be in Europe"
        raise InvalidArguments(message, tool_call_id="", tool_name="picky")

    assert _run(picky, {}) == ToolResult("Error: city must be in Europe", ok=False)


@pytest.mark.parametrize(
    "error",
    [AgentError("the user must log in"), Cancelled("stop")],
    ids=["agent error", "cancelled"],
)
def test_agui_errors_raised_by_a_tool_end_the_run(error: Exception) -> None:
    @tool
    async def fail() -> str:
        raise error

    with pytest.raises(type(error), match=str(error)):
        _run(fail, {})


def test_sync_tools_run_off_the_event_loop_thread() -> None:
    @tool
    def where() -> bool:
        return threading.current_thread() is threading.main_thread()

    assert _run(where, {}).content == "false"


def test_a_tool_that_takes_the_run_context_gets_it_and_runs_on_the_loop_thread() -> None:
    @tool
    def add_task(ctx: RunContext[Board], title: str) -> bool:
        ctx.state.tasks.append(title)
        ctx.publish_state()
        return threading.current_thread() is threading.main_thread()

    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"), state=Board)

    result = asyncio.run(add_task.run({"title": "ship it"}, ctx=ctx))

    assert "ctx" not in json.dumps(add_task.parameters)
    assert result.content == "true"
    assert ctx.state.tasks == ["ship it"]
    assert [event.type for event in events.drain()] == ["STATE_SNAPSHOT"]


def test_a_positional_only_context_and_arguments_are_passed_positionally() -> None:
    @tool
    async def f(ctx: RunContext[Board], a: int, /, b: int = 2) -> int:
        return a * b + len(ctx.state.tasks)

    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"), state=Board)

    assert asyncio.run(f.run({"a": 3}, ctx=ctx)).content == "6"


def test_a_tool_that_takes_the_run_context_refuses_to_run_without_it() -> None:
    @tool
    def f(ctx: RunContext[Board]) -> int:
        return len(ctx.state.tasks)

    with pytest.raises(UsageError, match="takes the RunContext; pass ctx="):
        _run(f, {})


def test_calling_the_tool_object_calls_the_function() -> None:
    assert get_weather("Paris") == "sunny in Paris"
    assert repr(get_weather) == "<BackendTool 'get_weather'>"
    assert get_weather.fn.__name__ == "get_weather"
    assert get_weather.__doc__ == "Get the current weather for a city."


@given(a=st.integers(min_value=-(2**53), max_value=2**53), b=st.text(max_size=20))
def test_any_fitting_arguments_reach_the_function_unchanged(a: int, b: str) -> None:
    @tool
    def echo(a: int, b: str) -> dict[str, JsonValue]:
        return {"a": a, "b": b}

    assert json.loads(_run(echo, json.dumps({"a": a, "b": b})).content) == {"a": a, "b": b}


# -- methods -----------------------------------------------------------------------------------


class TravelDesk:
    def __init__(self, greeting: str) -> None:
        self.greeting = greeting

    @tool
    def greet(self, name: str) -> str:
        """Greet a traveller."""
        return f"{self.greeting}, {name}"


class SlottedDesk:
    __slots__ = ("greeting",)

    def __init__(self) -> None:
        self.greeting = "Hi"

    @tool(requires_approval=True)
    async def greet(self, name: str) -> str:
        return f"{self.greeting}, {name}"


def test_a_method_tool_binds_to_its_instance_and_leaves_self_out_of_the_schema() -> None:
    desk = TravelDesk("Bonjour")

    bound = desk.greet

    assert bound is desk.greet
    assert bound.parameters == {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "additionalProperties": False,
    }
    assert _run(bound, {"name": "Ana"}).content == "Bonjour, Ana"
    assert isinstance(TravelDesk.greet, BackendTool)


def test_a_method_tool_on_a_slotted_class_keeps_its_options() -> None:
    desk = SlottedDesk()

    bound = desk.greet

    assert bound.requires_approval
    assert _run(bound, {"name": "Bo"}).content == "Hi, Bo"


# -- toolbox -----------------------------------------------------------------------------------


def test_a_toolbox_wraps_plain_functions_and_gives_specs_in_order() -> None:
    def local_time(city: str) -> str:
        """The local time."""
        return f"12:00 in {city}"

    toolbox = Toolbox([get_weather, local_time, TravelDesk("Hi").greet])

    assert [spec.name for spec in toolbox.specs()] == ["get_weather", "local_time", "greet"]
    assert len(toolbox) == 3
    assert "local_time" in toolbox
    assert "nope" not in toolbox
    assert toolbox.get("nope") is None
    assert [backend.name for backend in toolbox] == ["get_weather", "local_time", "greet"]
    backend = toolbox.get("local_time")
    assert backend is not None
    assert _run(backend, {"city": "Oslo"}).content == "12:00 in Oslo"


def test_a_toolbox_refuses_two_tools_of_one_name() -> None:
    with pytest.raises(UsageError, match="two tools are named 'get_weather'"):
        Toolbox([get_weather, tool(name="get_weather")(lambda: None)])


def test_a_toolbox_builds_schemas_at_once_so_a_bad_signature_fails_early() -> None:
    def bad(**options: int) -> int:
        return len(options)

    with pytest.raises(UsageError, match="have no schema"):
        Toolbox([bad])
