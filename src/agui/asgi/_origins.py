"""Which web pages and which host names may use the endpoint: `Origin`, CORS, `Host`.

A browser lets any page send a "simple" cross-site POST (no preflight, no custom headers, a body
typed `text/plain`, a form, or no type at all) and only hides the answer from the page; the
request itself, and the run it starts, still happen. Three checks keep a page the server did
not choose from driving an agent through a visitor's browser; each refuses with 403 before the
body is read:

- **Origin.** A browser names the page's origin in `Origin` on every cross-site POST (and on
  same-origin ones). A request without it is not a browser's cross-site request and is
  admitted; one from the endpoint's own origin (the `Host` the request was sent to) is admitted;
  any other must be in `allowed_origins` (`"*"` admits every origin), else it gets 403
  `ORIGIN_NOT_ALLOWED`. The scheme of the page is not compared with the server's, since a proxy
  in front may end TLS; host and port are (a missing port is the scheme's default).
- **CORS.** A page of an allowed origin may read the stream: its requests are answered with
  `Access-Control-Allow-Origin` naming it, and its preflight (an `OPTIONS` carrying
  `Access-Control-Request-Method`) with 204, `GET, HEAD, POST` (the capabilities and a durable
  run's events are read with GET), the headers it asked to send, and a max age of ten minutes;
  a refusal's own headers (`WWW-Authenticate`, `Retry-After`, `Allow`) are listed in
  `Access-Control-Expose-Headers`, so the page may read them. A preflight from any other origin
  gets 403. No credentials mode is offered:
  cookies are not how this endpoint is authorized (`authorize` reads headers such as
  `Authorization`, which a page sends after a preflight).
- **Host.** A page of an attacker's domain that re-points its DNS name at 127.0.0.1 (DNS
  rebinding) becomes same-origin with a server on loopback, and its requests carry the
  attacker's name in `Host`. With `allowed_hosts` set (`agui serve` sets it to
  `LOOPBACK_HOSTS` when it binds a loopback address) a `Host` naming anything else gets 403
  `HOST_NOT_ALLOWED`, on every method. A request without `Host` (HTTP/1.0) is not a browser's.

The JSON `Content-Type` rule that completes this (a simple request cannot have it) is checked
in `agui.asgi._admission`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from agui.asgi._admission import Refusal
from agui.errors import UsageError

__all__ = ["LOOPBACK_HOSTS", "OriginPolicy", "is_preflight"]

LOOPBACK_HOSTS: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")
"""The names a browser uses for this machine, which `agui serve` on loopback admits in `Host`."""

_DEFAULT_PORTS = {"http": 80, "https": 443}
_PREFLIGHT_MAX_AGE = b"600"
_Headers = list[tuple[bytes, bytes]]


def is_preflight(method: str, headers: Mapping[str, str]) -> bool:
    """Whether a request is a CORS preflight: an `OPTIONS` from a page, naming its method."""
    return (
        method == "OPTIONS" and "origin" in headers and "access-control-request-method" in headers
    )


@dataclasses.dataclass(frozen=True)
class OriginPolicy:
    """The origins and host names an endpoint admits, built once from `asgi_app`'s options."""

    origins: frozenset[str]
    """Cross-site origins admitted, each `scheme://host[:port]`, lower-case."""
    any_origin: bool
    """Whether every origin is admitted (`"*"` was among `allowed_origins`)."""
    hosts: frozenset[str] | None
    """The host names admitted in `Host`, lower-case, or `None` to admit any."""

    @classmethod
    def build(cls, origins: Iterable[str], hosts: Iterable[str] | None) -> OriginPolicy:
        """The policy of these options; `UsageError` names each entry that is not one."""
        # A lone string is one entry, not a sequence of one-letter ones.
        origins = [origins] if isinstance(origins, str) else list(origins)
        hosts = [hosts] if isinstance(hosts, str) else hosts
        bad = [origin for origin in origins if origin != "*" and _origin_key(origin) is None]
        problems = [
            f"allowed_origins entry {origin!r} is not an origin: write it as a browser sends "
            f"it in Origin, scheme://host[:port] with no path, such as 'https://app.example'"
            for origin in bad
        ]
        host_names = None if hosts is None else [host.strip() for host in hosts]
        problems += [
            f"allowed_hosts entry {host!r} is not a host name: write a name or an address "
            f"without a port, such as 'localhost' or '::1'"
            for host in host_names or ()
            if not host or "/" in host or host.startswith("[") or host.count(":") == 1
        ]
        if problems:
            raise UsageError("; ".join(problems))
        return cls(
            origins=frozenset(origin.lower().rstrip("/") for origin in origins if origin != "*"),
            any_origin="*" in origins,
            hosts=None if host_names is None else frozenset(map(_host_name, host_names)),
        )

    def check_host(self, headers: Mapping[str, str]) -> None:
        """Refuse (403) a `Host` naming a host this endpoint does not serve under."""
        host = headers.get("host")
        if self.hosts is None or host is None:
            return
        name = _host_name(_split_authority(host)[0])
        if name not in self.hosts:
            message = (
                f"this endpoint does not answer for the host {host!r}: it serves "
                f"{', '.join(sorted(self.hosts))}, and a page on another name that resolves "
                f"here is refused (DNS rebinding); reach it by one of those names"
            )
            raise Refusal(403, "HOST_NOT_ALLOWED", message)

    def check_origin(self, headers: Mapping[str, str]) -> _Headers:
        """The CORS headers for a request from an admitted page (none for a same-origin one).

        Raises:
            Refusal: 403 `ORIGIN_NOT_ALLOWED` for a page of an origin that is not admitted.
        """
        origin = headers.get("origin")
        if origin is None or _same_origin(origin, headers.get("host")):
            return []
        if self.any_origin or origin.lower().rstrip("/") in self.origins:
            return [
                (b"access-control-allow-origin", origin.encode("latin-1")),
                (b"vary", b"Origin"),
            ]
        message = (
            f"a page of the origin {origin!r} may not run this agent: only same-origin pages and "
            f"the origins in allowed_origins may; add it to asgi_app(allowed_origins=[...]) if "
            f"that page is yours"
        )
        raise Refusal(403, "ORIGIN_NOT_ALLOWED", message)

    def preflight(self, headers: Mapping[str, str]) -> _Headers:
        """The headers of the 204 that answers an admitted page's preflight (else `Refusal`)."""
        allowed = self.check_origin(headers)
        asked = headers.get("access-control-request-headers", "").strip()
        return [
            *allowed,
            # GET too: a page reads the capabilities and a durable run's events with GET, and a
            # GET that sends `Authorization` is preflighted like a POST.
            (b"access-control-allow-methods", b"GET, HEAD, POST"),
            *([(b"access-control-allow-headers", asked.encode("latin-1"))] if asked else []),
            (b"access-control-max-age", _PREFLIGHT_MAX_AGE),
            (b"cache-control", b"no-store"),
        ]


def _origin_key(origin: str) -> tuple[str, str, int] | None:
    """An origin's scheme, host and port, or `None` when it is not `scheme://host[:port]`."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or parts.path.strip("/"):
        return None
    if parts.query or parts.fragment or parts.username is not None:
        return None
    return scheme, parts.hostname, port if port is not None else _DEFAULT_PORTS[scheme]


def _same_origin(origin: str, host: str | None) -> bool:
    """Whether a page's origin names the host and port the request was sent to."""
    key = _origin_key(origin)
    if key is None or host is None:
        return False
    scheme, origin_name, origin_port = key
    name, port = _split_authority(host)
    return (_host_name(name), port or _DEFAULT_PORTS[scheme]) == (
        _host_name(origin_name),
        origin_port,
    )


def _split_authority(authority: str) -> tuple[str, int | None]:
    """A `Host` header's name and port (`None` when it has none, or one that is not a number)."""
    authority = authority.strip()
    if authority.startswith("["):
        name, _, rest = authority[1:].partition("]")
        port = rest.removeprefix(":")
    elif authority.count(":") == 1:
        name, _, port = authority.partition(":")
    else:
        name, port = authority, ""
    return name, int(port) if port.isdigit() else None


def _host_name(name: str) -> str:
    """A host name compared as DNS does: any case, with or without the root's trailing dot."""
    return name.strip().lower().removesuffix(".")
