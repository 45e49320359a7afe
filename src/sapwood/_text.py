"""Names and labels from data are data: how they are shown in a terminal and in plots.

A column name, a class label or a category value comes from someone else's file. It
is shown as the characters it is, never as instructions: control characters (an ESC
that starts a terminal sequence, a carriage return that overwrites the line) become
visible escapes, matplotlib's mathtext ``$...$`` is escaped, and very long names are
shortened with an ellipsis where they are shown (JSON keeps them whole). Rich markup
is the printer's concern: every rich call that shows data passes ``markup=False`` or a
``rich.text.Text``.
"""

from __future__ import annotations

import unicodedata

__all__ = ["MAX_SHOWN", "for_plot", "quoted", "shorten", "visible"]

# A name longer than this is shortened where it is shown (tables, plots, messages).
MAX_SHOWN = 60


def visible(text) -> str:
    """``text`` with every control or format character (Unicode categories Cc, Cf,
    Zl, Zp: ESC, CR, BEL, bidirectional overrides, line separators) written as a
    visible escape such as ``\\x1b`` or ``\\u202e``; tabs and newlines too."""
    text = str(text)
    if text.isprintable():
        return text
    out = []
    for char in text:
        if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"):
            code = ord(char)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
                       if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(char)
    return "".join(out)


def shorten(text, limit: int = MAX_SHOWN) -> str:
    """:func:`visible` ``text``, cut to ``limit`` characters with an ellipsis."""
    text = visible(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def for_plot(text, limit: int = MAX_SHOWN) -> str:
    """A label for matplotlib: :func:`shorten`, with ``$`` escaped so that mathtext
    never parses it."""
    return shorten(text, limit).replace("$", r"\$")


def quoted(text) -> str:
    """A name for a message: :func:`shorten` in single quotes."""
    return f"'{shorten(text)}'"
