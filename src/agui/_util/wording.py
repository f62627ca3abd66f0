"""How agui's messages name a kind of value: with its indefinite article.

A refusal names what it was given ("not a list", "is an int"), and the article follows the
sound of the name's start, not its letter: "an int", but "a UserMessage" and "a UUID", whose
`u` sounds as "you". Names here are Python type names and words agui writes, so a short rule
of such starts is enough.
"""

from __future__ import annotations

import re

__all__ = ["with_article"]

_YOU = re.compile(r"u(?:ni|s[aeiu]|t[aeiou]|r[aeiou]|u|k)", re.IGNORECASE)
"""Starts where `u` sounds as "you": unit, user, utility, uranium, UUID, ukulele."""


def with_article(name: str) -> str:
    """`name` after its indefinite article: "a dict", "an int", "a UserMessage".

    Examples:
        >>> with_article("dict"), with_article("int"), with_article("Exception")
        ('a dict', 'an int', 'an Exception')
        >>> with_article("UserMessage"), with_article("UUID"), with_article("UnknownEventType")
        ('a UserMessage', 'a UUID', 'an UnknownEventType')
    """
    vowel = name[:1].lower() in "aeiou" and _YOU.match(name) is None
    return f"{'an' if vowel else 'a'} {name}"
