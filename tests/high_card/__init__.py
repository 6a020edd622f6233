"""High Card: a game defined entirely in the tests, to prove that a new game is one package
plus one registry entry on the server (docs/architecture.md, "Adding a game").

Not a regulated game: one card to the player's hand and one to the dealer's, ace high; a
wager on the higher hand wins even money and equal ranks push.
"""
