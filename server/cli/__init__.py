"""The ``croupier`` command line."""
