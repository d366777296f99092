package io.icefloe.spark;

import java.util.List;
import org.apache.spark.sql.connector.catalog.MetadataColumn;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The metadata columns the connector reads (the Rust reader's {@code _file}, {@code _pos}, and
 * for v3 tables the row lineage {@code _row_id} and {@code _last_updated_sequence_number}): a
 * merge-on-read row-level operation identifies a row by {@code _file} and {@code _pos}, and
 * carries an updated row's {@code _row_id} into its new data file, as Java Iceberg does.
 */
final class MetadataColumns {
  static final String FILE = "_file";
  static final String POS = "_pos";
  static final String ROW_ID = "_row_id";
  static final String LAST_UPDATED_SEQUENCE_NUMBER = "_last_updated_sequence_number";

  private MetadataColumns() {}

  static boolean isMetadataColumn(String name) {
    return FILE.equals(name)
        || POS.equals(name)
        || ROW_ID.equals(name)
        || LAST_UPDATED_SEQUENCE_NUMBER.equals(name);
  }

  static DataType type(String name) {
    return FILE.equals(name) ? DataTypes.StringType : DataTypes.LongType;
  }

  /** The row lineage columns are null where a row has none (Java's are nullable too). */
  static boolean nullable(String name) {
    return ROW_ID.equals(name) || LAST_UPDATED_SEQUENCE_NUMBER.equals(name);
  }

  /** The schema with the metadata columns after its fields, in the reader's order. */
  static StructType append(StructType schema, List<String> names) {
    StructType out = schema;
    for (String name : names) {
      out = out.add(new StructField(name, type(name), nullable(name), org.apache.spark.sql.types.Metadata.empty()));
    }
    return out;
  }

  /** The metadata columns of a table of this format version (row lineage from v3, as Java's). */
  static MetadataColumn[] all(int formatVersion) {
    if (formatVersion >= 3) {
      // Spark keeps an updated row's _row_id in the row it re-inserts (preserved on update and
      // reinsert) and nulls its _last_updated_sequence_number, which the new file's sequence
      // number then gives: Java's SparkMetadataColumns
      return new MetadataColumn[] {
        column(FILE, null),
        column(POS, null),
        column(ROW_ID, preserve(true, true, false)),
        column(LAST_UPDATED_SEQUENCE_NUMBER, preserve(false, false, false))
      };
    }
    return new MetadataColumn[] {column(FILE, null), column(POS, null)};
  }

  private static String preserve(boolean onReinsert, boolean onUpdate, boolean onDelete) {
    return "{\"" + MetadataColumn.PRESERVE_ON_REINSERT + "\":" + onReinsert
        + ",\"" + MetadataColumn.PRESERVE_ON_UPDATE + "\":" + onUpdate
        + ",\"" + MetadataColumn.PRESERVE_ON_DELETE + "\":" + onDelete + "}";
  }

  private static MetadataColumn column(String name, String metadataJson) {
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
        return nullable(name);
      }

      @Override
      public String metadataInJSON() {
        return metadataJson;
      }
    };
  }
}
