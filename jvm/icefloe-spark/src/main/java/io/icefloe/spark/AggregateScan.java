package io.icefloe.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.read.LocalScan;
import org.apache.spark.sql.types.StructType;

/** Pushed-down aggregates answered from the files' metadata: one row, no files read. */
class AggregateScan implements LocalScan {
  private final String name;
  private final StructType schema;
  private final Object[] values;
  private final String described;

  AggregateScan(String name, StructType schema, Object[] values, String described) {
    this.name = name;
    this.schema = schema;
    this.values = values;
    this.described = described;
  }

  @Override
  public InternalRow[] rows() {
    return new InternalRow[] {new GenericInternalRow(values.clone())};
  }

  @Override
  public StructType readSchema() {
    return schema;
  }

  @Override
  public String description() {
    return "icefloe " + name + " [aggregates from metadata: " + described + "]";
  }
}
