"""The options the provider models share, checked when the model is built.

A slip in a model's name or its limits would otherwise reach the provider with the first
request, as a 400 in the middle of a run, or fail as a bare `TypeError` deep in the SDK; checked
here, it is a `UsageError` naming the option and what it takes, before any client is made.
"""

from __future__ import annotations

from agui._util.numbers import whole
from agui.errors import UsageError

__all__ = ["checked_count", "checked_name"]


def checked_name(model: object, wrapper: str, example: str) -> str:
    """The model's name, refused unless it is non-blank text.

    Examples:
        >>> checked_name("gpt-4o-mini", "OpenAIModel", "gpt-4o-mini")
        'gpt-4o-mini'
        >>> checked_name("", "OpenAIModel", "gpt-4o-mini")
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: OpenAIModel(model) takes the provider's name of the model, ...
    """
    if not isinstance(model, str) or not model.strip():
        message = (
            f"{wrapper}(model) takes the provider's name of the model, such as {example!r}, "
            f"not {model!r}"
        )
        raise UsageError(message)
    return model


def checked_count(name: str, value: object, why: str) -> int:
    """A whole number of at least 1 (`bool` is not one), refused with `why` otherwise.

    Examples:
        >>> checked_count("max_tokens", 4096, "the API requires a cap")
        4096
        >>> checked_count("max_tokens", "100", "the API requires a cap")
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: max_tokens must be a whole number, at least 1, not '100': ...
    """
    count = whole(value)
    if count is None or count < 1:
        message = f"{name} must be a whole number, at least 1, not {value!r}: {why}"
        raise UsageError(message)
    return count
