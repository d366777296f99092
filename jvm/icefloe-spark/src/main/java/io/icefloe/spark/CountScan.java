package io.icefloe.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.read.LocalScan;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/** A pushed-down {@code COUNT(*)} answered from metadata: one row, no files read. */
class CountScan implements LocalScan {
  private final String name;
  private final long count;

  CountScan(String name, long count) {
    this.name = name;
    this.count = count;
  }

  @Override
  public InternalRow[] rows() {
    return new InternalRow[] {new GenericInternalRow(new Object[] {count})};
  }

  @Override
  public StructType readSchema() {
    return new StructType(
        new StructField[] {DataTypes.createStructField("count(*)", DataTypes.LongType, false)});
  }

  @Override
  public String description() {
    return "icefloe " + name + " [COUNT(*) from metadata: " + count + "]";
  }
}
