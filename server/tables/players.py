"""Who may play, and as whom: players log in here (docs/protocol.md, "Players").

- **demo** (the embedded default): anyone may play with clearly labelled play money; a new
  demo player gets ``starting_balance`` and a token signed by this server so they come back
  as themselves after a reconnect;
- **jwt**: the operator's platform issues a signed JWT whose ``sub`` is the player id (and
  ``name`` the display name); this server verifies it (PyJWT) and never issues money itself;
- a player station's touchscreen logs in with the token its agent was given
  (docs/electronic-tables.md).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

import jwt

from server.config import ServerSettings
from server.stations.meters import station_player
from server.stations.service import StationRefused, Stations
from server.wallet.ledger import PLAY_MONEY_ISSUER, Ledger, Transfer, player_account

__all__ = ["AuthError", "Player", "Players"]

_DEMO_AUDIENCE = "croupier-demo"


class AuthError(Exception):
    """A login that cannot be accepted; ``code`` goes to the client."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Player:
    player_id: str
    name: str
    play_money: bool
    token: str
    station: str | None = None  # a player station's touchscreen (docs/electronic-tables.md)


_CURRENCY = re.compile(r"^[A-Z]{3}$")  # ISO 4217


class Players:
    """Logging players in, and their balances. ``demo_secret`` signs demo players' tokens
    (a cluster's nodes share it, so a demo player's token is good on any of them)."""

    def __init__(
        self,
        settings: ServerSettings,
        ledger: Ledger,
        demo_secret: bytes,
        stations: Stations | None = None,
    ) -> None:
        self.settings, self.ledger, self.stations = settings, ledger, stations
        self._demo_secret = demo_secret
        self._names: dict[str, str] = {}

    def login(self, name: str | None, token: str | None) -> Player:
        if token is not None and self.stations is not None:
            try:
                station = self.stations.login(token)
            except StationRefused as exc:
                raise AuthError(exc.code, str(exc)) from None
            if station is not None:
                return Player(
                    station_player(station),
                    self.stations.name(station),
                    self.stations.play_money,
                    token,
                    station,
                )
        if token is not None:
            return self._login_token(token)
        if self.settings.auth.mode != "demo":
            raise AuthError("token_required", "this server admits players with a token only")
        return self._new_demo_player(name or "Player")

    def _new_demo_player(self, name: str) -> Player:
        player_id = "demo-" + secrets.token_hex(6)
        account = player_account(player_id)
        self.ledger.open_account(account)
        if self.settings.starting_balance:
            self.ledger.post(
                f"grant:{player_id}",
                [Transfer(PLAY_MONEY_ISSUER, account, self.settings.starting_balance, "grant")],
            )
        token = jwt.encode(
            {"sub": player_id, "name": name, "aud": _DEMO_AUDIENCE}, self._demo_secret, "HS256"
        )
        self._names[player_id] = name
        return Player(player_id, name, True, token)

    def _login_token(self, token: str) -> Player:
        auth = self.settings.auth
        try:
            claims = jwt.decode(
                token, self._demo_secret, algorithms=["HS256"], audience=_DEMO_AUDIENCE
            )
            play_money = True
            if hasattr(self.ledger, "refresh"):
                # An operator's wallet holds the players' money: a play-money token (a
                # demo player of an earlier run on this data directory) is not its.
                raise AuthError("bad_token", "this server admits the operator's players only")
        except jwt.InvalidTokenError:
            if auth.mode != "jwt":
                raise AuthError("bad_token", "this token was not issued by this server") from None
            key = auth.jwt_public_key or auth.jwt_secret or ""
            try:
                claims = jwt.decode(
                    token,
                    key,
                    algorithms=list(auth.jwt_algorithms),
                    audience=auth.jwt_audience,
                    issuer=auth.jwt_issuer,
                    options={"require": ["sub", "exp"]},
                )
            except jwt.InvalidTokenError as exc:
                raise AuthError("bad_token", f"the token was refused: {exc}") from None
            play_money = False
        player_id = str(claims["sub"])
        if not player_id or len(player_id) > 64:
            raise AuthError("bad_token", "the token's subject is not a valid player id")
        if player_id.startswith("station:"):  # the player stations' own ids
            raise AuthError("bad_token", "a player id may not begin with 'station:'")
        name = str(claims.get("name") or self._names.get(player_id) or player_id)[:32]
        self._names[player_id] = name
        self.ledger.open_account(player_account(player_id))
        currency = claims.get("currency")
        if currency is not None and hasattr(self.ledger, "set_currency"):
            # An operator's wallet keeps each player's money in the player's own currency
            # (docs/wallet.md): the token says which, over the configuration's.
            if not isinstance(currency, str) or not _CURRENCY.match(currency):
                raise AuthError("bad_token", "the token's currency is not an ISO 4217 code")
            try:
                self.ledger.set_currency(player_id, currency)
            except ValueError as exc:  # a cluster plays in the configuration's currency
                raise AuthError("bad_token", str(exc)) from None
        return Player(player_id, name, play_money, token)

    def balance(self, player_id: str) -> int:
        return self.ledger.balance(player_account(player_id))

    def currency(self, player: Player) -> str:
        """The currency a player's balance is shown in."""
        if player.play_money:
            return self.settings.currency
        currency_of = getattr(self.ledger, "currency_of", None)
        return "USD" if currency_of is None else str(currency_of(player.player_id))

    async def refresh(self, player: Player, balance: int) -> int:
        """The player's balance as the operator's wallet has it now, where it keeps the
        players' money (docs/wallet.md); ``balance`` elsewhere. ``AuthError``
        (``wallet_unavailable``) when the operator does not answer: a player whose balance
        cannot be read is not admitted."""
        refresh = getattr(self.ledger, "refresh", None)
        if refresh is None or player.play_money or player.station is not None:
            return balance
        if await refresh(player.player_id) is None:
            raise AuthError("wallet_unavailable", "the operator's wallet did not answer: try again")
        # The operator's answer, and what is on its way to it (an earlier round's credit).
        return self.balance(player.player_id)
