"""The curated public surface: sorted `__all__`, every public name exported and documented."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import sys
from types import ModuleType

import pytest

import agui
from agui import errors


def _public_modules() -> list[ModuleType]:
    """Every public module and subpackage, found on disk so new modules are covered."""
    return [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(agui.__path__, prefix="agui.")
        if not any(part.startswith("_") for part in info.name.split("."))
    ]


PUBLIC_MODULES = _public_modules()
# The bridges to pydantic-ai, the Agents SDK and LangGraph import their framework, which the
# `dev` extra installs from Python 3.11 on: below it, importing them fails, as it does for a
# user without it.
FRAMEWORK_NAMES = (
    {}
    if sys.version_info >= (3, 11)
    else {"agui.bridges": {"langgraph", "openai_agents", "pydantic_ai", "stream_as_subagent"}}
)
MODULE_IDS = [module.__name__ for module in PUBLIC_MODULES]


def _ruff_sort_key(name: str) -> tuple[int, list[tuple[int, int, str]]]:
    """The order ruff's RUF022 wants: CONSTANTS, then Classes, then the rest, each naturally."""
    if len(name) > 1 and name.upper() == name and name.lower() != name:
        kind = 0
    elif name[:1].isupper():
        kind = 1
    else:
        kind = 2
    chunks = re.split(r"(\d+)", name)
    natural = [(1, int(chunk), "") if chunk.isdigit() else (0, 0, chunk) for chunk in chunks]
    return kind, natural


def _exported(module: ModuleType) -> list[str]:
    names: list[str] = module.__all__
    return names


def _defined_here(module: ModuleType) -> list[str]:
    """Public classes and functions whose home is this module (not re-exports)."""
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and value.__module__ == module.__name__
    ]


def test_the_sort_key_agrees_with_ruff_on_known_orders() -> None:
    names = [
        "parse_event",
        "Tool",
        "SSE_MEDIA_TYPE",
        "__version__",
        "Agent2",
        "Agent10",
        "AguiError",
    ]

    assert sorted(names, key=_ruff_sort_key) == [
        "SSE_MEDIA_TYPE",
        "Agent2",
        "Agent10",
        "AguiError",
        "Tool",
        "__version__",
        "parse_event",
    ]


def test_the_package_all_is_sorted_and_every_name_exists() -> None:
    names = _exported(agui)

    assert names == sorted(names, key=_ruff_sort_key)
    assert len(names) == len(set(names))
    assert [name for name in names if not hasattr(agui, name)] == []


def test_the_package_exports_the_names_the_design_promises() -> None:
    promised = {
        "EventType",
        "RunAgentInput",
        "RunOutcome",
        "parse_event",
        "encode_sse",
        "parse_input",
        "AguiError",
        "UsageError",
        "ProtocolViolation",
        "Event",
        "Message",
        "Tool",
        "Context",
        "Interrupt",
        "ResumeEntry",
        "TokenUsage",
        "UnknownMemberWarning",
        "__version__",
    }

    assert promised <= set(_exported(agui))


def test_the_top_level_is_the_core_in_at_most_thirty_names() -> None:
    names = set(_exported(agui))

    assert len(names) <= 30
    assert {"RunContext", "ToolCallHandle", "run", "asgi_app", "AgentError"} <= names
    assert names.isdisjoint({"ToolLoopAgent", "BackendTool", "Toolbox", "tool"})  # agui.agents
    assert names.isdisjoint({"InvalidArguments", "DecodeError", "PatchError", "Cancelled"})


def test_the_optional_layers_are_loaded_through_the_package_on_first_use() -> None:
    from agui import asgi, patch, testing  # noqa: PLC0415 - the modules to compare with

    assert agui.testing is testing
    assert agui.patch is patch
    assert agui.asgi_app is asgi.asgi_app
    assert {"testing", "patch", "asgi_app"} <= set(dir(agui))


def test_an_unknown_top_level_name_is_an_attribute_error() -> None:
    moved = "ToolLoopAgent"  # it lives in agui.agents

    with pytest.raises(AttributeError, match="module 'agui' has no attribute 'ToolLoopAgent'"):
        getattr(agui, moved)


def test_public_modules_are_discovered_from_the_package_directory() -> None:
    expected = {"events", "types", "messages", "capabilities", "errors", "wire", "sse"}

    assert expected <= {module.__name__.removeprefix("agui.") for module in PUBLIC_MODULES}


@pytest.mark.parametrize("module", PUBLIC_MODULES, ids=MODULE_IDS)
def test_each_public_module_has_a_sorted_all_of_names_that_exist(module: ModuleType) -> None:
    assert hasattr(module, "__all__"), f"{module.__name__} has no __all__"
    names = _exported(module)

    assert names == sorted(names, key=_ruff_sort_key)
    assert len(names) == len(set(names))
    absent = FRAMEWORK_NAMES.get(module.__name__, set())
    assert [name for name in names if name not in absent and not hasattr(module, name)] == []


@pytest.mark.parametrize("module", PUBLIC_MODULES, ids=MODULE_IDS)
def test_each_public_class_and_function_is_exported_by_its_module(module: ModuleType) -> None:
    missing = [name for name in _defined_here(module) if name not in _exported(module)]

    assert missing == [], f"{module.__name__} does not export {missing}"


@pytest.mark.parametrize("module", PUBLIC_MODULES, ids=MODULE_IDS)
def test_each_public_class_and_function_has_a_docstring_with_an_example(
    module: ModuleType,
) -> None:
    undocumented = [
        name for name in _defined_here(module) if ">>>" not in (getattr(module, name).__doc__ or "")
    ]

    assert undocumented == [], f"{module.__name__}: no '>>>' example in {undocumented}"


@pytest.mark.parametrize("module", PUBLIC_MODULES, ids=MODULE_IDS)
def test_each_public_module_explains_itself_in_a_docstring(module: ModuleType) -> None:
    assert (module.__doc__ or "").strip()


def _error_classes() -> list[type[errors.AguiError]]:
    return [
        value
        for value in vars(errors).values()
        if inspect.isclass(value) and issubclass(value, errors.AguiError)
    ]


ERROR_CLASSES = _error_classes()


def test_every_error_class_has_a_distinct_code() -> None:
    codes = [cls.code for cls in ERROR_CLASSES]

    assert len(codes) == len(set(codes))


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=[cls.__name__ for cls in ERROR_CLASSES])
def test_every_error_class_declares_its_own_screaming_snake_code(
    cls: type[errors.AguiError],
) -> None:
    assert "code" in vars(cls), f"{cls.__name__} inherits its code"
    assert re.fullmatch(r"[A-Z]+(_[A-Z]+)*", cls.code)
    assert cls.__name__ in errors.__all__


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("AguiError", "AGUI_ERROR"),
        ("UsageError", "USAGE_ERROR"),
        ("ProtocolViolation", "PROTOCOL_VIOLATION"),
        ("StateError", "STATE_ERROR"),
        ("PatchError", "PATCH_ERROR"),
        ("AgentError", "AGENT_ERROR"),
        ("Cancelled", "CANCELLED"),
        ("DecodeError", "DECODE_ERROR"),
        ("UnknownEventType", "UNKNOWN_EVENT_TYPE"),
        ("MalformedEvent", "MALFORMED_EVENT"),
        ("InvalidInput", "INVALID_INPUT"),
        ("FrameTooLarge", "FRAME_TOO_LARGE"),
        ("HTTPStatusError", "HTTP_STATUS_ERROR"),
    ],
    ids=str,
)
def test_error_codes_are_stable(name: str, code: str) -> None:
    """A frontend branches on RUN_ERROR.code; a code never changes once released."""
    cls: type[errors.AguiError] = getattr(errors, name)

    assert cls.code == code


def test_the_warning_lives_in_the_tree_with_a_stable_code_and_is_a_user_warning() -> None:
    assert issubclass(errors.UnknownMemberWarning, UserWarning)
    assert errors.UnknownMemberWarning.code == "UNKNOWN_MEMBER"
    assert "UnknownMemberWarning" in errors.__all__


def test_the_decode_errors_share_one_base() -> None:
    for cls in (
        errors.UnknownEventType,
        errors.MalformedEvent,
        errors.InvalidInput,
        errors.FrameTooLarge,
    ):
        assert issubclass(cls, errors.DecodeError)


def test_every_error_derives_from_agui_error_and_is_an_exception() -> None:
    assert all(issubclass(cls, Exception) for cls in ERROR_CLASSES)
    assert set(errors.__all__) >= {cls.__name__ for cls in ERROR_CLASSES}
