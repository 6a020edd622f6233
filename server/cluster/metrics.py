"""The cluster's part of ``/metrics`` (docs/operations.md, "Metrics")."""

from __future__ import annotations

from server.cluster.node import ClusterNode
from server.metrics import Registry

__all__ = ["cluster_metrics"]


def cluster_metrics(metrics: Registry, node: ClusterNode) -> None:
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
    metrics.gauge(
        "croupier_cluster_database_up",
        "1 while the shared PostgreSQL database answers this node, 0 otherwise",
        lambda: int(node.database_ok),
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
        "croupier_cluster_events_published_total",
        "Table events this node published to the other nodes (batched per event-loop turn)",
        lambda: node.bus.published,
    )
    metrics.counted(
        "croupier_cluster_events_received_total",
        "Table events this node received from the other nodes' tables",
        lambda: node.bus.received,
    )
    metrics.counted(
        "croupier_cluster_publish_failures_total",
        "Batches of table events Redis did not take (other nodes' viewers missed them)",
        lambda: node.bus.publish_failures,
    )
    metrics.gauge(
        "croupier_cluster_publish_lag_seconds",
        "From an event's framing to Redis having it, for the last batch published",
        lambda: node.bus.lag,
    )
    metrics.counted(
        "croupier_cluster_commands_total",
        "Players' commands this node sent to the node running their table",
        lambda: node.rpc.calls,
    )
    metrics.counted(
        "croupier_cluster_command_seconds_total",
        "Time those commands took to be answered, summed (divide by commands_total)",
        lambda: node.rpc.latency_total,
    )
    metrics.counted(
        "croupier_cluster_commands_served_total",
        "Commands from other nodes' players that this node ran for its tables",
        lambda: node.rpc.served,
    )
    metrics.counted(
        "croupier_cluster_tables_handed_over_total",
        "Tables this node handed to another after finishing the round in play",
        lambda: s.tables_handed_over,
    )
