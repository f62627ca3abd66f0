"""The endpoint's hooks failing: a JSON 500 that names the hook, and its traceback in the log.

`asgi_app` calls the application's code before a run starts: `authorize(headers)`, the
`transformers` factory, a `capabilities` function, `thread_access` (`agui.asgi._identity`). Left
alone, an exception there reaches the ASGI server, which answers a bare `500 Internal Server Error`
in plain text, without the CORS headers a page needs to read it, and the page's client cannot tell
it from the server falling over. So a hook that raises (or returns what it must not) is answered
like any refusal: a JSON body with the stable code `HOOK_FAILED`, naming the hook and the
exception's type, never its message (it may carry what the hook was guarding); the traceback goes to
the `agui.asgi` log at ERROR. That holds for a `KeyboardInterrupt`, `SystemExit` or stray
`CancelledError` the hook raises too, as it does for an agent's: a real signal never arrives inside
a hook (the server's handler has it), and only the request's own cancellation (a shutdown), which
can reach only an async hook, goes on (`lets_through`).
"""

from __future__ import annotations

import asyncio
import logging

from agui._util.tasks import cancelling
from agui.asgi._admission import Refusal
from agui.asgi._profile import Chain
from agui.transform import Transformer

__all__ = ["hook_failed", "lets_through", "new_chain"]

_log = logging.getLogger("agui.asgi")


def lets_through(error: BaseException) -> bool:
    """Whether a hook's `error` is the request's own cancellation, which goes on (a shutdown).

    Examples:
        >>> lets_through(KeyboardInterrupt()), lets_through(ValueError())
        (False, False)
    """
    if not isinstance(error, asyncio.CancelledError):
        return False
    task = asyncio.current_task()
    return task is not None and cancelling(task) > 0


def hook_failed(error: BaseException, hook: str) -> Refusal:
    """The 500 for a hook that raised `error`; the traceback is logged here.

    Examples:
        >>> refusal = hook_failed(KeyError("token"), "authorize")
        >>> refusal.status, refusal.body["code"]
        (500, 'HOOK_FAILED')
        >>> print(refusal.body["message"])
        the endpoint's authorize hook raised KeyError; the traceback is on the agui.asgi log
    """
    _log.error("the endpoint's %s hook raised; answering 500", hook, exc_info=error)
    message = (
        f"the endpoint's {hook} hook raised {type(error).__qualname__}; "
        "the traceback is on the agui.asgi log"
    )
    return Refusal(500, "HOOK_FAILED", message)


def new_chain(factory: Chain | None, *, legacy: bool = False) -> tuple[Transformer, ...]:
    """A fresh transformer chain from the endpoint's factory; a `HOOK_FAILED` if it fails.

    The endpoint's factory is the application's wrapped in `agui.asgi._profile.profiled`,
    which checks what the application's returns, and is told whether the request is a legacy
    peer's (`legacy`).

    Raises:
        Refusal: the factory raised, or returned what is not a list of transformers.

    Examples:
        >>> new_chain(None)
        ()
        >>> new_chain(lambda *, legacy: 1 / 0)
        Traceback (most recent call last):
        ...
        agui.asgi._admission.Refusal: the endpoint's transformers hook raised ZeroDivisionError; ...
    """
    if factory is None:
        return ()
    try:
        return tuple(factory(legacy=legacy))
    except BaseException as error:  # its SystemExit too: see the module docstring
        # A plain call, never suspended: no cancellation of the request can be inside it.
        raise hook_failed(error, "transformers") from error
