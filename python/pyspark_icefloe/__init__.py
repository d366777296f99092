"""Lets Spark find the ``icefloe`` data source without ``icefloe.spark.register``.

Spark 4 registers, in every session, the ``DefaultSource`` of each importable top-level
module named ``pyspark_*``. This module is that hook for icefloe: with icefloe installed
where Spark's Python workers run, ``spark.read.format("icefloe")`` works as soon as the
session starts. :func:`icefloe.spark.register` is still what takes the
``spark.icefloe.catalog.*`` conf and turns on filter pushdown; it replaces this
registration.
"""

from __future__ import annotations

from icefloe.spark.source import IcefloeDataSource as DefaultSource

__all__ = ["DefaultSource"]
