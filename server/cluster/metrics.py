"""The cluster's part of ``/metrics`` (docs/operations.md, "Metrics")."""

from __future__ import annotations

from server.cluster.node import ClusterNode
from server.net.metrics import Metrics

__all__ = ["cluster_metrics"]


def cluster_metrics(metrics: Metrics, node: ClusterNode) -> None:
    s = node.stats
    metrics.gauge(
        "croupier_cluster_tables_owned",
        "Tables this node holds the lease of and runs",
        lambda: len(node.owned),
    )
    metrics.gauge(
        "croupier_cluster_redis_up",
        "1 while Redis answers this node, 0 otherwise",
        lambda: int(node.redis_ok),
    )
    metrics.counted(
        "croupier_cluster_lease_renewals_total",
        "Table leases this node renewed",
        lambda: s.lease_renewals,
    )
    metrics.counted(
        "croupier_cluster_lease_renewal_failures_total",
        "Ticks whose renewals failed because Redis did not answer",
        lambda: s.lease_renewal_failures,
    )
    metrics.counted(
        "croupier_cluster_leases_lost_total",
        "Tables this node stopped because another node held their lease (or it expired)",
        lambda: s.leases_lost,
    )
    metrics.counted(
        "croupier_cluster_tables_taken_total",
        "Tables this node took (at start, from a node that left or died, or handed over)",
        lambda: s.tables_taken,
    )
    metrics.counted(
        "croupier_cluster_tables_handed_over_total",
        "Tables this node handed to another after finishing the round in play",
        lambda: s.tables_handed_over,
    )
