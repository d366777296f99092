package io.icefloe.spark;

import java.util.List;
import org.apache.spark.sql.connector.catalog.MetadataColumn;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The metadata columns the connector reads (the Rust reader's {@code _file} and {@code _pos}):
 * a merge-on-read row-level operation identifies a row by them, as Java Iceberg does.
 */
final class MetadataColumns {
  static final String FILE = "_file";
  static final String POS = "_pos";

  private MetadataColumns() {}

  static boolean isMetadataColumn(String name) {
    return FILE.equals(name) || POS.equals(name);
  }

  static DataType type(String name) {
    return FILE.equals(name) ? DataTypes.StringType : DataTypes.LongType;
  }

  /** The schema with the metadata columns after its fields, in the reader's order. */
  static StructType append(StructType schema, List<String> names) {
    StructType out = schema;
    for (String name : names) {
      out = out.add(new StructField(name, type(name), false, org.apache.spark.sql.types.Metadata.empty()));
    }
    return out;
  }

  static MetadataColumn[] all() {
    return new MetadataColumn[] {column(FILE), column(POS)};
  }

  private static MetadataColumn column(String name) {
    return new MetadataColumn() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public DataType dataType() {
        return type(name);
      }

      @Override
      public boolean isNullable() {
        return false;
      }
    };
  }
}
