"""Code that runs where the data is, e.g. on Spark executors: reading planned tasks
(``read``), writing data files (``write``) and position deletes (``position_deletes``), and
the per-group work of row-level deletes (``row_deletes``).

These modules import only ``icefloe._native``, ``icefloe.errors`` and each other: never the
driver side (tables, scans, changes, catalogs). ``tests/test_layers.py`` checks it.
"""
