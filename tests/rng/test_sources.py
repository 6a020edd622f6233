"""Random sources: OS CSPRNG and the OS-seeded HMAC_DRBG with its policies and health tests
(SP 800-90A; 58 Pa. Code 810a.5)."""

import pytest

import rng.hmac_drbg as hmac_drbg_module
import rng.sources as sources_module
from rng import (
    HealthTestFailure,
    HmacDrbgSource,
    OsSource,
    ProductionModeError,
    RandomSource,
    ReseedPolicy,
    ReseedRequired,
    RngError,
    default_source,
    seeded_source,
    set_production_mode,
)
from rng.hmac_drbg import HmacDrbg


@pytest.fixture(autouse=True)
def _reset_mode() -> object:
    yield
    set_production_mode(None)


def test_both_sources_satisfy_the_protocol() -> None:
    for source in (OsSource(), default_source("t")):
        assert isinstance(source, RandomSource)
        assert len(source.random_bytes(100)) == 100
        assert 0 <= source.randbelow(52) < 52


def test_two_os_seeded_instances_never_run_in_step() -> None:
    """Personalization per instance and OS seeding: two instances with the same caller
    personalization still differ (NJAC 13:69E-1.28G(b)5)."""
    a, b = HmacDrbgSource("table-1"), HmacDrbgSource("table-1")
    assert a.random_bytes(64) != b.random_bytes(64)


def test_seeded_source_is_reproducible_and_seed_sensitive() -> None:
    assert seeded_source(1).random_bytes(300) == seeded_source(1).random_bytes(300)
    assert seeded_source(1).random_bytes(32) != seeded_source(2).random_bytes(32)
    a, b = seeded_source("x"), seeded_source("x")
    a.reseed(b"round 1")
    b.reseed(b"round 1")
    assert a.random_bytes(40) == b.random_bytes(40)
    assert a.deterministic and not default_source().deterministic


@pytest.mark.parametrize("how", ["env", "call"])
def test_seeded_mode_is_refused_in_production(how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if how == "env":
        monkeypatch.setenv("CROUPIER_ENV", "production")
    else:
        set_production_mode(True)
    with pytest.raises(ProductionModeError):
        seeded_source(1)
    assert default_source().randbelow(10) < 10  # the OS-seeded source is fine


def test_bytes_are_served_identically_whatever_the_request_sizes() -> None:
    """The output buffer is an optimisation only: the byte stream does not depend on how
    it is sliced (within one reseed period)."""
    one = seeded_source(7).random_bytes(5000)
    src = seeded_source(7)
    pieces = b"".join(src.random_bytes(n) for n in [1, 2, 511, 3, 1000, 0, 2000, 1483])
    assert pieces == one


def test_reseed_discards_buffered_output() -> None:
    a, b = seeded_source(3), seeded_source(3)
    a.random_bytes(10)
    b.random_bytes(10)
    b.reseed(b"no more bets")
    assert a.random_bytes(32) != b.random_bytes(32)
    assert b.reseeds == 1


def test_reseed_policy_reseeds_automatically_at_the_interval() -> None:
    source = HmacDrbgSource("t", policy=ReseedPolicy(reseed_interval=3), buffer_size=16)
    source.random_bytes(16 * 10)
    assert source.reseeds >= 2


def test_prediction_resistance_reseeds_before_every_request() -> None:
    source = HmacDrbgSource("t", policy=ReseedPolicy(prediction_resistance=True), buffer_size=8)
    source.random_bytes(8 * 5)
    assert source.reseeds >= 5


def test_policy_bounds() -> None:
    for bad in (0, 2**48 + 1):
        with pytest.raises(ValueError):
            ReseedPolicy(reseed_interval=bad)


def test_mechanism_demands_reseed_at_the_interval_sp800_90a_10_1_2_5() -> None:
    drbg = HmacDrbg(b"\x01" * 32, reseed_interval=2)
    drbg.generate(8)
    drbg.generate(8)
    with pytest.raises(ReseedRequired):
        drbg.generate(8)
    drbg.reseed(b"\x02" * 32)
    assert len(drbg.generate(8)) == 8


def test_mechanism_limits() -> None:
    with pytest.raises(ValueError, match="256-bit"):
        HmacDrbg(b"short")
    drbg = HmacDrbg(b"\x01" * 32)
    with pytest.raises(ValueError):
        drbg.generate(65_537)


def test_continuous_test_stops_a_generator_that_repeats(monkeypatch: pytest.MonkeyPatch) -> None:
    drbg = HmacDrbg(b"\x01" * 32)
    monkeypatch.setattr(hmac_drbg_module, "_mac", lambda key, data: b"\x00" * 32)
    with pytest.raises(HealthTestFailure, match="continuous"):
        drbg.generate(64)
    monkeypatch.undo()
    with pytest.raises(RngError, match="uninstantiated"):
        drbg.generate(1)  # once failed, it stays stopped


def test_entropy_repetition_test_refuses_stuck_entropy(monkeypatch: pytest.MonkeyPatch) -> None:
    """SP 800-90B 4.4.1 repetition count on every entropy input."""
    monkeypatch.setattr(sources_module.os, "urandom", lambda n: b"\x07" * n)
    with pytest.raises(HealthTestFailure, match="entropy"):
        HmacDrbgSource("t")


def test_repeated_entropy_input_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    source = HmacDrbgSource("t")
    fixed = bytes(range(32))
    monkeypatch.setattr(sources_module.os, "urandom", lambda n: fixed[:n])
    source.reseed()
    with pytest.raises(HealthTestFailure):
        source.reseed()


def test_known_answer_self_test_guards_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources_module, "_known_answer_passed", False)
    monkeypatch.setattr(hmac_drbg_module, "_KAT_RETURNED", b"\x00" * 128)
    with pytest.raises(HealthTestFailure, match="known-answer"):
        HmacDrbgSource("t")


def test_closed_source_refuses_to_draw() -> None:
    source = default_source()
    source.random_bytes(5)
    source.close()
    with pytest.raises(RngError):
        source.random_bytes(600)
