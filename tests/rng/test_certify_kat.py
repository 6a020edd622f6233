"""Known-answer tests of the certification report, and the broken generators they catch."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from rng import seeded_source
from rng.certify import broken, kat
from rng.certify.kat_vectors import CAVP_VECTORS, CavpVector
from rng.certify.subject import Subject

DATA = Path(__file__).parent / "data"
FILES = {
    "no_reseed": DATA / "HMAC_DRBG_SHA256_no_reseed.rsp",
    "pr_false": DATA / "HMAC_DRBG_SHA256_pr_false.rsp",
}


def test_embedded_vectors_replay() -> None:
    assert {v.kind for v in CAVP_VECTORS} == {"no_reseed", "pr_false"}
    for vector in CAVP_VECTORS:
        assert kat.replay(vector).hex() == vector.returned_bits
    for kind in ("no_reseed", "pr_false"):
        m = kat.hmac_drbg_vectors(kind)
        assert m.passed and m.statistic == 2.0


@pytest.mark.parametrize("vector", CAVP_VECTORS, ids=lambda v: f"{v.kind}-{v.count}")
def test_embedded_vectors_are_copied_from_the_nist_files(vector: CavpVector) -> None:
    path = FILES[vector.kind]
    if not path.exists():
        pytest.skip(f"{path.name} is not in tests/rng/data")
    text = path.read_text()
    for value in (vector.entropy_input, vector.nonce, vector.returned_bits):
        assert f"= {value}" in text


def test_a_corrupted_vector_fails() -> None:
    good = CAVP_VECTORS[0]
    assert kat.replay(good).hex() == good.returned_bits
    wrong = replace(good, nonce="00" * 16)
    assert kat.replay(wrong).hex() != good.returned_bits


def test_startup_self_test_passes() -> None:
    assert kat.drbg_startup_self_test().passed


def test_the_real_scaling_deal_and_wheels_give_the_known_answers() -> None:
    subject = Subject(seeded_source("kat"))
    for check in (kat.scaling_kat, kat.lazy_deal, kat.wheel_mapping):
        m = check(subject)
        assert m.passed, m.detail


def _broken(name: str) -> Subject:
    subjects = broken.broken_subjects(lambda: seeded_source("kat inner"), mt_seed=1)
    return next(s for s in subjects if s.name == name)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("modulo-scaling", {"scaling": False, "deal": False, "wheels": False}),
        ("off-by-one-deal", {"scaling": True, "deal": False, "wheels": True}),
        ("mersenne-twister", {"scaling": True, "deal": True, "wheels": True}),
        ("biased-byte", {"scaling": True, "deal": True, "wheels": True}),
    ],
)
def test_known_answers_on_broken_generators(name: str, expected: dict[str, bool]) -> None:
    subject = _broken(name)
    got = {
        "scaling": kat.scaling_kat(subject).passed,
        "deal": kat.lazy_deal(subject).passed,
        "wheels": kat.wheel_mapping(subject).passed,
    }
    assert got == expected


def test_modulo_scaling_is_named_in_the_detail() -> None:
    m = kat.scaling_kat(_broken("modulo-scaling"))
    assert "randbelow(52) ff d0 cf: expected 51, got 47" in m.detail


def test_scripted_source_refuses_to_invent_bytes() -> None:
    source = kat.ScriptedSource(b"\x01")
    assert source.random_bytes(1) == b"\x01"
    with pytest.raises(kat.ScriptExhausted):
        source.random_bytes(1)
