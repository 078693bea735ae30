"""Syntax highlighting for `python -m srcad show`: colours added, text unchanged."""

import re

from srcad.highlight import highlight, highlight_tokens

SOURCE = '''def grad_f(x, n=3):
    """A docstring."""
    # grad of: y = np.sin(x)
    return (x * 2.5, len("s"), n)
'''


def plain(text):
    return re.sub(r"\033\[[0-9;]*m", "", text)


def test_our_highlighter_colours_tokens_and_keeps_the_text():
    coloured = highlight_tokens(SOURCE)
    assert plain(coloured) == SOURCE
    assert "\033[1;34mdef\033[0m" in coloured  # keyword
    assert "\033[1;33mgrad_f\033[0m" in coloured  # the defined name
    assert "\033[35m2.5\033[0m" in coloured  # number
    assert "\033[2;3m# grad of: y = np.sin(x)\033[0m" in coloured  # comment
    assert "\033[36mlen\033[0m" in coloured  # builtin


def test_text_that_does_not_tokenize_comes_back_unchanged():
    assert highlight_tokens("def f(:\n    '''open") == "def f(:\n    '''open"


def test_highlight_keeps_the_text():
    assert plain(highlight(SOURCE)) == SOURCE
