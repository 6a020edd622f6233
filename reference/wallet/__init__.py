"""The reference operator wallet: a casino operator's seamless wallet as a small real HTTP
service (``python -m reference.wallet``), implementing the contract of docs/wallet.md with
knobs for the failures an operator's platform shows (latency, errors before a call is
applied, timeouts after it was, refusals, restarts that keep the books)."""
