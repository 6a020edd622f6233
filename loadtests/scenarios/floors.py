"""The tables each scenario's users choose from, a table repeated as often as its share of
players. Kept free of Locust so that loadtests/bench_loadtest.py can read them without
Locust's gevent patching its own process."""

# peak_evening: a casino floor's mix, baccarat most, then roulette, then the rest.
PEAK_EVENING = (
    ("baccarat",) * 4
    + ("baccarat-no-commission", "rising-phoenix")
    + ("roulette-double", "roulette-single", "roulette-double")
    + ("casino-war", "big-six", "21-baccarat", "down-under")
)

# reconnect_storm: one table of each kind of round.
RECONNECT_STORM = ("baccarat", "roulette-double", "casino-war", "big-six")
