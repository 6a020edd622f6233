"""Player stations of fully automated electronic gaming tables (docs/electronic-tables.md):
credits, TITO tickets, meters kept in critical memory, handpays and lockouts."""
