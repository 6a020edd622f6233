"""Several ``croupier serve`` nodes sharing Redis and PostgreSQL (docs/operations.md,
"Running a cluster"): table leases and fencing tokens, the nodes' registry, and what moves a
table from one node to another."""
