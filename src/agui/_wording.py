"""How agui's messages name a kind of value: with its indefinite article.

A refusal names what it was given ("not a list", "is an int"), and the article follows the
sound of the name's first letter. Names here are Python type names and words agui writes, so
the first letter decides; "an" before a vowel is the whole rule.
"""

from __future__ import annotations

__all__ = ["with_article"]


def with_article(name: str) -> str:
    """`name` after its indefinite article: "a dict", "an int".

    Examples:
        >>> with_article("dict"), with_article("int"), with_article("Exception")
        ('a dict', 'an int', 'an Exception')
    """
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"
