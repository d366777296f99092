"""Planning scans (driver side): see ``icefloe.scan.table_scan``; metadata tables:
``icefloe.scan.inspect``."""

from .inspect import METADATA_TABLES, InspectTable
from .table_scan import PlanBatches, ScanPlan, TableScan

__all__ = ["TableScan", "ScanPlan", "PlanBatches", "InspectTable", "METADATA_TABLES"]
