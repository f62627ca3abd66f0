"""Backend tools: schema from the signature, validation, execution and result content."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import json
import sys
import threading
import typing
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Annotated, Literal, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import AliasChoices, AliasPath, BaseModel, Field, JsonValue

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


def test_a_google_args_section_is_read_at_any_indent_its_first_item_sets() -> None:
    @tool
    def forecast(city: str, days: int = 1) -> str:
        """Get a forecast.

        Args:
          city: The city name,
            as people write it.
          days (int): How many days.
        """
        return city * days

    assert forecast.description == "Get a forecast."
    assert forecast.parameters["properties"] == {
        "city": {"type": "string", "description": "The city name, as people write it."},
        "days": {"type": "integer", "default": 1, "description": "How many days."},
    }


def _numpy_forecast(city: str, days: int = 1, hours: int = 0) -> str:
    """Get a forecast.

    Parameters
    ----------
    city : str
        The city name.
    days, hours : int
        How far ahead.

    Returns
    -------
    str
        The forecast.
    """
    return city * days * hours


def _sphinx_forecast(city: str, days: int = 1, hours: int = 0) -> str:
    """Get a forecast.

    :param str city: The city name.
    :type city: str
    :param days: How far
        ahead.
    :param hours: How far ahead.
    :param: a field without a name, which describes nothing
    :returns: the forecast
    """
    return city * days * hours


@pytest.mark.parametrize("function", [_numpy_forecast, _sphinx_forecast], ids=["numpy", "sphinx"])
def test_numpy_and_sphinx_parameter_sections_describe_the_parameters_not_the_tool(
    function: Callable[..., str],
) -> None:
    forecast = tool(function)

    assert forecast.description == "Get a forecast."
    assert forecast.parameters["properties"] == {
        "city": {"type": "string", "description": "The city name."},
        "days": {"type": "integer", "default": 1, "description": "How far ahead."},
        "hours": {"type": "integer", "default": 0, "description": "How far ahead."},
    }


def test_text_after_a_parameter_section_ends_it_and_stays_out_of_the_schema() -> None:
    @tool
    def forecast(city: str, days: int = 1) -> str:
        """Get a forecast.

        Args:
            city: The city name.

        Returns:
            The forecast.
        The text of no parameter.

        :param days: How many days.
        Still no parameter's.

        :class:`str` holds it, a role and not a field.
        """
        return city * days

    assert forecast.description == "Get a forecast."
    assert forecast.parameters["properties"] == {
        "city": {"type": "string", "description": "The city name."},
        "days": {"type": "integer", "default": 1, "description": "How many days."},
    }


def test_a_section_that_dedents_past_its_items_ends_there() -> None:
    @tool
    def forecast(city: str, days: int = 1) -> str:
        """Get a forecast.

        Args:
            city: The city name.
        days: not an item of the section, which ended.
        """
        return city * days

    assert forecast.parameters["properties"] == {
        "city": {"type": "string", "description": "The city name."},
        "days": {"type": "integer", "default": 1},
    }


class _Opaque:
    """A class pydantic has no schema for."""


if TYPE_CHECKING:
    from decimal import Decimal as _Later  # the type checkers see it, and pydantic does not


class _Pending(BaseModel):
    later: _Later


class _Cat(BaseModel):
    kind: Literal["cat"]


class _Dog(BaseModel):
    kind: str


def _opaque(x: int | _Opaque) -> None: ...
def _callback(x: Callable[[int], int]) -> None: ...
def _pending(x: _Pending) -> None: ...
def _discriminated(x: Annotated[_Cat | _Dog, Field(discriminator="kind")]) -> None: ...
def _bound(x: Annotated[int, Field(gt="one")]) -> None: ...


_UNKNOWN_FIX = (
    r"annotate it with JSON types .*, a pydantic model, a dataclass or a TypedDict; an object the "
    r"model cannot send comes through a RunContext\[...\] parameter, or the tool's own instance "
    r"\(make the tool a method\)$"
)


@pytest.mark.parametrize(
    ("function", "expected"),
    [
        (
            _opaque,
            r"^tool '_opaque': parameter 'x' \(int \| .*_Opaque\) has no JSON Schema: "
            r"pydantic cannot read that type from JSON; " + _UNKNOWN_FIX,
        ),
        (
            _callback,
            (
                r"^tool '_callback': parameter 'x' \(.*Callable\[\[int\], int\]\) has no "
                r"JSON Schema: JSON Schema cannot describe that type \(a callable, say\), so "
                r"the model cannot send one; take a JSON value that says what to do, such as a "
                r"name, and choose in the tool$"
            ),
        ),
        (
            _pending,
            (
                r"^tool '_pending': parameter 'x' \(.*_Pending\) has no JSON Schema: a model "
                r"it uses refers to a name that is not defined \(a forward reference\); define "
                r"that name, then call model_rebuild\(\) on the model$"
            ),
        ),
        (
            _discriminated,
            (
                r"^tool '_discriminated': parameter 'x' \(.*\) has no JSON Schema: pydantic "
                r"refuses it \(Model '_Dog' needs field 'kind' to be of type `Literal`\); "
                r"change its annotation, or the Field\(...\) in it$"
            ),
        ),
        (
            _bound,
            (
                r"^tool '_bound': parameter 'x' \(.*\) has no JSON Schema: pydantic refuses it "
                r"\(ValueError: 'gt' must be coercible to an integer\); change its annotation"
            ),
        ),
    ],
    ids=["unknown class", "callable", "undefined name", "user error", "schema error"],
)
def test_a_parameter_type_with_no_schema_is_refused_naming_the_tool_the_parameter_and_the_fix(
    function: Callable[..., None], expected: str
) -> None:
    with pytest.raises(UsageError, match=expected):
        Toolbox([function])


class _OldTypedDict(typing.TypedDict):
    k: int


def _old_typed_dict(first: int, x: list[_OldTypedDict]) -> None: ...


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="pydantic reads typing.TypedDict from 3.12")
def test_a_typing_typed_dict_before_python_3_12_is_refused_saying_to_use_typing_extensions() -> (
    None
):
    with pytest.raises(
        UsageError,
        match=r"^tool '_old_typed_dict': parameter 'x' \(list\[.*_OldTypedDict\]\) has no JSON "
        r"Schema: it holds a typing.TypedDict, which pydantic reads only on Python 3.12 and "
        r"later; define the TypedDict with typing_extensions.TypedDict$",
    ):
        Toolbox([_old_typed_dict])


def test_an_alias_a_field_gives_names_the_argument_the_schema_shows_and_the_model_sends() -> None:
    @tool
    def scale(
        a: Annotated[int, Field(alias="amount")],
        b: int = Field(2, validation_alias="by"),
        c: int = 0,
    ) -> int:
        """Scale a number.

        Args:
            a: What to scale.
        """
        return a * b + c

    assert scale.parameters == {
        "type": "object",
        "properties": {
            "amount": {"type": "integer", "description": "What to scale."},
            "by": {"type": "integer", "default": 2},
            "c": {"type": "integer", "default": 0},
        },
        "required": ["amount"],
        "additionalProperties": False,
    }
    assert _run(scale, {"amount": 3, "by": 4, "c": 1}) == ToolResult("13")
    assert _run(scale, {"a": 3}) == ToolResult(
        "Error: the arguments of tool 'scale' do not fit its signature: '/amount': Field "
        "required; '/a': Extra inputs are not permitted",
        ok=False,
    )


def test_two_parameters_the_model_would_send_by_one_name_are_refused() -> None:
    def scale(a: Annotated[int, Field(alias="b")], b: int) -> int:
        return a * b

    with pytest.raises(
        UsageError,
        match=r"^tool 'scale': parameters 'a' and 'b' are both the argument 'b', and the model "
        r"can send it only once; give one another alias$",
    ):
        Toolbox([scale])


def _choices(a: Annotated[int, Field(validation_alias=AliasChoices("b", "c"))]) -> int:
    return a


def _path(a: int = Field(validation_alias=AliasPath("b", 0))) -> int:
    return a


@pytest.mark.parametrize(
    ("function", "kind"),
    [(_choices, "AliasChoices"), (_path, "AliasPath")],
    ids=["choices", "path"],
)
def test_an_alias_that_is_not_one_name_is_refused(function: Callable[..., int], kind: str) -> None:
    with pytest.raises(
        UsageError,
        match=rf"^tool '{function.__name__}': parameter 'a' is read through {kind}, but a "
        r"tool's schema shows one name for each argument, and the model sends that one; give "
        r"the Field a string alias$",
    ):
        Toolbox([function])


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


class _Reading(BaseModel):
    temp: float
    extra: dict[str, JsonValue] = {}
    history: tuple[float, ...] = ()
    note: str | None = None


@pytest.mark.parametrize(
    "reading",
    [
        _Reading(temp=float("nan")),
        _Reading(temp=1.0, extra={"peak": [2.0, float("inf")]}),
        _Reading(temp=1.0, history=(2.0, float("-inf"))),
    ],
    ids=["field", "nested in a dict", "in a tuple"],
)
def test_a_model_result_holding_nan_or_an_infinity_gives_an_error_result_as_a_dict_does(
    reading: _Reading, caplog: pytest.LogCaptureFixture
) -> None:
    """pydantic would write the number as null, a value the tool never returned."""

    @tool
    def measure() -> _Reading:
        return reading

    result = _run(measure, {})

    assert result == ToolResult("Error: the tool 'measure' returned no readable result", ok=False)
    assert "returned no readable result: it holds NaN or an infinity" in caplog.text


def test_a_model_result_with_null_fields_and_finite_numbers_is_its_json() -> None:
    @tool
    def measure() -> _Reading:
        return _Reading(temp=1.5, extra={"peak": [2.0, "high", None]}, history=(1.0,))

    assert _run(measure, {}) == ToolResult(
        '{"temp":1.5,"extra":{"peak":[2.0,"high",null]},"history":[1.0],"note":null}'
    )


async def _seven() -> int:
    return 7


def test_an_awaitable_a_tool_returns_is_awaited_once_whether_the_tool_is_sync_or_async() -> None:
    @tool
    def sync_tool() -> object:
        return _seven()

    @tool
    async def async_tool() -> object:
        return _seven()

    assert _run(sync_tool, {}) == ToolResult("7")
    assert _run(async_tool, {}) == ToolResult("7")


def test_a_coroutine_left_after_that_await_gives_an_error_result_and_is_closed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    left: list[Coroutine[object, object, int]] = []

    async def nested() -> object:
        left.append(_seven())
        return left[0]

    @tool
    async def deferred() -> object:
        return nested()

    result = _run(deferred, {})

    assert result == ToolResult("Error: the tool 'deferred' returned no readable result", ok=False)
    assert inspect.getcoroutinestate(left[0]) == inspect.CORO_CLOSED
    assert (
        "returned no readable result: it is a coroutine, what awaiting the tool's result gave, "
        "and a result is awaited only once; await it inside the tool" in caplog.text
    )


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


class Forecasts:
    @tool
    @staticmethod
    def lookup(city: str, days: int = 1) -> str:
        """Look up a forecast."""
        return f"{city}:{days}"

    @staticmethod
    @tool
    def search(city: str, days: int = 1) -> str:
        """Search the forecasts."""
        return f"{city}:{days}"


@pytest.mark.parametrize("name", ["lookup", "search"], ids=["tool over", "staticmethod over"])
def test_a_static_method_tool_keeps_every_parameter_read_from_the_class_or_an_instance(
    name: str,
) -> None:
    for owner in (Forecasts, Forecasts()):
        backend = cast("BackendTool[..., str]", getattr(owner, name))

        assert backend.parameters["properties"] == {
            "city": {"type": "string"},
            "days": {"type": "integer", "default": 1},
        }
        assert _run(backend, {"city": "Oslo"}) == ToolResult("Oslo:1")
        assert backend("Oslo", 2) == "Oslo:2"


def test_a_class_method_is_refused_as_a_tool_saying_what_to_write_instead() -> None:
    with pytest.raises(
        UsageError,
        match=r"^tool '_create' is a classmethod, and a tool is a function, plain or async, or a "
        r"method bound to the instance it is read from; make it a @staticmethod that names its "
        r"class, or a method$",
    ):
        tool(cast("Callable[..., str]", classmethod(_create)))


def _create(cls: type[object], name: str) -> str:
    return f"{cls.__name__} {name}"


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
