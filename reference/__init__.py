"""Reference implementations of the outside parties Croupier talks to, for tests, the demo and
load tests: small real services written from the contract in docs/, never imported by the
server (``tests/test_import_direction.py``)."""
