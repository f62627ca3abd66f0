"""Media parts on their way to a provider: which kinds a model takes, and the refusals.

A user message may carry images, audio, video and documents beside its text. Each provider API
takes some of them, each in its own shape, so the mapping lives in each model module; what they
share is here: the `input_media` option (the kinds a model is configured to take, checked when
the model is built), the size of an inline image against `max_image_bytes`, and the wording of a
refusal. A part no mapping fits is refused with `UnsupportedContent` before the request is sent:
never dropped, which would let the model answer as if the user had sent only text.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from agui.errors import ContentTooLarge, UnsupportedContent, UsageError
from agui.messages import (
    AudioPart,
    DataSource,
    DocumentPart,
    ImagePart,
    VideoPart,
)

__all__ = ["MediaKind", "MediaPart", "MediaRules", "data_url", "decoded_size", "describe"]

MediaKind = Literal["image", "audio", "video", "document"]
"""The kinds of media a message part may hold."""

MediaPart = ImagePart | AudioPart | VideoPart | DocumentPart
"""A part that is not text."""

_MIB = 2**20


class MediaRules:
    """What one model takes: the kinds of media its API carries, as configured, and a size cap.

    Examples:
        >>> rules = MediaRules("OpenAIModel 'gpt-4o'", ("image",), ["image"], 5 * 2**20)
        >>> rules.refusal(AudioPart(source=DataSource(value="", mime_type="audio/wav")), 1).code
        'UNSUPPORTED_CONTENT'
    """

    def __init__(
        self, model: str, api: Iterable[MediaKind], configured: Iterable[str], max_bytes: int
    ) -> None:
        self.model = model
        self.api: tuple[MediaKind, ...] = tuple(api)
        kinds: tuple[object, ...] = tuple(configured)
        extra = [kind for kind in kinds if kind not in self.api]
        if extra:
            message = (
                f"{model}: input_media takes the kinds of media its API carries "
                f"({', '.join(self.api)}), not {extra!r}; list only those the model reads, or () "
                "for a text-only model"
            )
            raise UsageError(message)
        self.accepts = frozenset(str(kind) for kind in kinds)
        self.max_bytes = max_bytes

    def check(self, part: MediaPart, number: int) -> None:
        """Refuse `part` (the `number`th user message's) unless the model is set to take it."""
        if part.type not in self.accepts:
            why = (
                f"it is configured to take {', '.join(sorted(self.accepts))} only"
                if self.accepts
                else "it is configured to take text only (input_media=())"
            )
            if part.type not in self.api:
                why = f"its API carries {', '.join(self.api) or 'no media'} only"
            raise self.refusal(part, number, why)
        if isinstance(part, ImagePart) and isinstance(part.source, DataSource):
            size = decoded_size(part.source.value)
            if size > self.max_bytes:
                message = (
                    f"user message {number}'s {describe(part)} is {_mib(size)}, over the "
                    f"{_mib(self.max_bytes)} limit of {self.model} (max_image_bytes); scale "
                    "the image down, or raise max_image_bytes up to what the provider accepts"
                )
                raise ContentTooLarge(message)

    def refusal(self, part: MediaPart, number: int, why: str = "") -> UnsupportedContent:
        """The error for a part the model cannot take, saying `why` when known."""
        reason = f": {why}" if why else ""
        message = (
            f"user message {number}'s {describe(part)} cannot go to {self.model}{reason}; "
            "send it to a model that reads it, or leave the part out of the message"
        )
        return UnsupportedContent(message)


def describe(part: MediaPart) -> str:
    """A part named for an error: its kind, media type and source.

    Examples:
        >>> describe(ImagePart(source=DataSource(value="aGk=", mime_type="image/png")))
        'image part (image/png, inline data)'
    """
    source = part.source
    where = {"data": "inline data", "url": "a URL", "file": "a file id"}[source.type]
    mime = source.mime_type
    return f"{part.type} part ({mime}, {where})" if mime else f"{part.type} part ({where})"


def data_url(source: DataSource) -> str:
    """Inline media as a `data:` URL.

    Examples:
        >>> data_url(DataSource(value="aGk=", mime_type="image/png"))
        'data:image/png;base64,aGk='
    """
    return f"data:{source.mime_type};base64,{source.value}"


def decoded_size(value: str) -> int:
    """The byte length base64 text decodes to, without decoding it.

    Examples:
        >>> decoded_size("aGk=")
        2
    """
    text = value.strip()
    return len(text) * 3 // 4 - (len(text) - len(text.rstrip("=")))


def _mib(size: int) -> str:
    return f"{size / _MIB:.1f} MiB"
