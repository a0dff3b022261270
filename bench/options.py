"""Command lines of the benchmarks, declared as tables of options."""

import argparse
from collections.abc import Iterable

# One row per option: its flag, its default (whose type is the option's; False makes a
# switch) and its help.
Option = tuple[str, object, str | None]


def options_parser(doc: str, options: Iterable[Option]) -> argparse.ArgumentParser:
    """A parser described by the first paragraph of `doc`, with the options in that order."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    for flag, default, help_text in options:
        if default is False:
            parser.add_argument(flag, action="store_true", help=help_text)
        else:
            parser.add_argument(flag, type=type(default), default=default, help=help_text)
    return parser
