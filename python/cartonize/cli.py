"""Command line: `cartonize pack request.json` (or `-` for stdin) prints the pack response.

Each subcommand is a function taking the parsed arguments and returning the exit status, so
later subcommands (`accounts`, `keys`) plug into `_build_parser` the same way.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

import cartonize
from cartonize.errors import BadRequest, CartonizeError
from cartonize.models import parse_request

__all__ = ["EXIT_INVALID_INPUT", "main"]

EXIT_INVALID_INPUT = 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit status."""
    args = _build_parser().parse_args(argv)
    status: int = args.run(args)
    return status


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cartonize", description="Cartonization: which boxes to use, where each item goes."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    pack = commands.add_parser("pack", help="pack a JSON request and print the JSON response")
    pack.add_argument("request", help="path of the request JSON file, or - for stdin")
    pack.set_defaults(run=_pack)
    return parser


def _pack(args: argparse.Namespace) -> int:
    try:
        request = parse_request(_read(args.request))
        response = cartonize.pack(request)
    except CartonizeError as exc:
        print(json.dumps(exc.to_body(), indent=2), file=sys.stderr)
        return EXIT_INVALID_INPUT
    print(response.model_dump_json(by_alias=True, exclude_none=True, indent=2))
    return 0


def _read(source: str) -> bytes:
    if source == "-":
        return sys.stdin.buffer.read()
    try:
        with open(source, "rb") as file:
            return file.read()
    except OSError as exc:
        raise BadRequest("cannot read the request", details=str(exc)) from exc
