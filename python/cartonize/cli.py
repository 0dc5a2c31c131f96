"""Command line: `cartonize pack request.json` (or `-` for stdin) prints the pack response;
`cartonize accounts ...` and `cartonize keys ...` manage the service's store under
`CARTONIZE_DATA_DIR` (default ./data).

Each subcommand is a function taking the parsed arguments and returning the exit status.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

import cartonize
from cartonize.errors import BadRequest, CartonizeError
from cartonize.models import parse_request
from cartonize.store import TIERS, Account, ApiKey, Store, StoreError, Tier

__all__ = ["EXIT_INVALID_INPUT", "EXIT_STORE_ERROR", "main"]

EXIT_INVALID_INPUT = 2
EXIT_STORE_ERROR = 3


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

    accounts = commands.add_parser("accounts", help="manage accounts and their plan tiers")
    account_commands = accounts.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = account_commands.add_parser("create", help="add an account")
    create.add_argument("--name", required=True)
    create.add_argument("--tier", choices=TIERS, default="free")
    create.add_argument("--plan-id", help="plan identifier (generated when omitted)")
    create.set_defaults(run=_store_command(_create_account))
    account_commands.add_parser("list", help="list accounts").set_defaults(
        run=_store_command(_list_accounts)
    )
    set_tier = account_commands.add_parser("set-tier", help="change an account's plan tier")
    set_tier.add_argument("--name", required=True)
    set_tier.add_argument("--tier", choices=TIERS, required=True)
    set_tier.set_defaults(run=_store_command(_set_tier))

    for action, enabled, text in (
        ("enable-connections", True, "let an account (premium or enterprise) use sync connections"),
        ("disable-connections", False, "stop an account's sync connections"),
    ):
        toggle = account_commands.add_parser(action, help=text)
        toggle.add_argument("name", help="account name")
        toggle.set_defaults(run=_store_command(_connections_toggle(enabled)))

    keys = commands.add_parser("keys", help="manage API keys")
    key_commands = keys.add_subparsers(dest="action", required=True, metavar="ACTION")
    create_key = key_commands.add_parser("create", help="issue a key; it is printed only once")
    create_key.add_argument("--account", required=True)
    create_key.add_argument("--name", required=True)
    create_key.set_defaults(run=_store_command(_create_key))
    list_keys = key_commands.add_parser("list", help="list keys by stem")
    list_keys.add_argument("--account")
    list_keys.set_defaults(run=_store_command(_list_keys))
    revoke = key_commands.add_parser("revoke", help="revoke a key by its 10-character stem")
    revoke.add_argument("stem")
    revoke.set_defaults(run=_store_command(_revoke_key))
    return parser


StoreCommand = Callable[[Store, argparse.Namespace], None]


def _store_command(command: StoreCommand) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            command(Store.from_env(), args)
        except StoreError as exc:
            print(f"cartonize: {exc}", file=sys.stderr)
            return EXIT_STORE_ERROR
        return 0

    return run


def _create_account(store: Store, args: argparse.Namespace) -> None:
    tier: Tier = args.tier
    _print_account(store.create_account(args.name, tier, args.plan_id))


def _list_accounts(store: Store, args: argparse.Namespace) -> None:
    for account in store.list_accounts():
        _print_account(account)


def _set_tier(store: Store, args: argparse.Namespace) -> None:
    tier: Tier = args.tier
    _print_account(store.set_tier(args.name, tier))


def _connections_toggle(enabled: bool) -> StoreCommand:
    def toggle(store: Store, args: argparse.Namespace) -> None:
        account = store.set_connections_enabled(args.name, enabled)
        _print_account(account)
        state = "enabled" if enabled else "disabled"
        print(f"connections {state}", file=sys.stderr)
        if enabled and account.tier == "free":
            print(
                "note: connections work only on premium and enterprise plans; "
                f"{account.name} is on free",
                file=sys.stderr,
            )

    return toggle


def _create_key(store: Store, args: argparse.Namespace) -> None:
    key, secret = store.create_key(args.account, args.name)
    _print_key(key)
    print(f"key: {secret}")
    print("This key is shown only once; only its stem is stored in clear.", file=sys.stderr)


def _list_keys(store: Store, args: argparse.Namespace) -> None:
    for key in store.list_keys(args.account):
        _print_key(key)


def _revoke_key(store: Store, args: argparse.Namespace) -> None:
    _print_key(store.revoke_key(args.stem))


def _print_account(account: Account) -> None:
    print(f"{account.name}\ttier={account.tier}\tplan={account.plan_id}")


def _print_key(key: ApiKey) -> None:
    state = "active" if key.active else f"revoked {key.revoked_at:%Y-%m-%dT%H:%M:%SZ}"
    print(f"{key.stem}\taccount={key.account_name}\tname={key.name}\t{state}")


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
