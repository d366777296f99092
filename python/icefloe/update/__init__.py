"""Changing tables (driver side): transactions and the schema, partition spec and sort order
builders (``transaction``), snapshot management and expiry (``snapshots``), and row-level
deletes (``row_deletes``). They commit through the table's catalog."""
