"""How a framework's model failure reads on the wire: coded, and without the provider's text.

A framework raises its own error when the model's API fails, and its text holds what the
provider answered: a body that may echo the prompt, a key's prefix, an internal host. The
bridges raise agui's `ModelError` family in its place, so the run ends with `RUN_ERROR` coded
by the kind of failure (`MODEL_UNAVAILABLE` for a 5xx, `MODEL_RATE_LIMITED` for a 429, ...),
and a message that says only the model's name and the status. The framework's error stays the
cause, so the server log has all of it.
"""

from __future__ import annotations

from agui.errors import (
    ModelAuthenticationError,
    ModelError,
    ModelRateLimited,
    ModelUnavailable,
)

__all__ = ["model_failure"]

_SERVER_ERROR = 500
_RATE_LIMITED = 429
_REFUSED = frozenset({401, 403})


def model_failure(model: str, status: int | None) -> ModelError:
    """The agui error for model `model` answering HTTP `status` (`None`: no answer).

    Examples:
        >>> error = model_failure("gpt-x", 503)
        >>> error.code, str(error)
        ('MODEL_UNAVAILABLE', "the model 'gpt-x' answered HTTP 503")
        >>> model_failure("gpt-x", None).code, model_failure("gpt-x", 429).code
        ('MODEL_UNAVAILABLE', 'MODEL_RATE_LIMITED')
        >>> model_failure("gpt-x", 401).code, model_failure("gpt-x", 400).code
        ('MODEL_AUTHENTICATION', 'MODEL_ERROR')
    """
    if status is None:
        return ModelUnavailable(f"the model {model!r} could not be reached")
    text = f"the model {model!r} answered HTTP {status}"
    if status in _REFUSED:
        return ModelAuthenticationError(text)
    if status == _RATE_LIMITED:
        return ModelRateLimited(text)
    if status >= _SERVER_ERROR:
        return ModelUnavailable(text)
    return ModelError(text)
