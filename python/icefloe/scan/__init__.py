"""Planning scans (driver side): see ``icefloe.scan.table_scan``."""

from .table_scan import PlanBatches, ScanPlan, TableScan

__all__ = ["TableScan", "ScanPlan", "PlanBatches"]
