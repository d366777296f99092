package io.icefloe.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.icefloe.spark.jni.Json;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.MetadataColumn;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The metadata columns the connector reads (the Rust reader's): {@code _spec_id}, {@code
 * _partition}, {@code _file}, {@code _pos}, {@code _deleted}, and from format version 3 {@code
 * _row_id} and {@code _last_updated_sequence_number}, as Java's {@code SparkTable}. A
 * merge-on-read row-level operation identifies a row by {@code _file} and {@code _pos}, as Java
 * Iceberg does. Their types are a table's ({@code _partition} is the union of its specs'
 * partition fields), given by the core for each table ({@link #of}).
 */
final class MetadataColumns {
  static final String FILE = "_file";
  static final String POS = "_pos";
  static final String ROW_ID = "_row_id";
  static final String LAST_UPDATED_SEQUENCE_NUMBER = "_last_updated_sequence_number";
  private static final Set<String> NAMES =
      Set.of(
          "_spec_id",
          "_partition",
          FILE,
          POS,
          "_deleted",
          ROW_ID,
          LAST_UPDATED_SEQUENCE_NUMBER);

  /** The columns of one table, as a Spark struct in Java's order. */
  private final StructType columns;

  private MetadataColumns(StructType columns) {
    this.columns = columns;
  }

  /** The metadata columns of a table, from the core's Iceberg fields (a JSON list). */
  static MetadataColumns of(JsonNode fields) {
    ObjectNode struct = Json.object();
    struct.put("type", "struct");
    struct.set("fields", fields);
    return new MetadataColumns(SparkTypes.schema(struct));
  }

  static boolean isMetadataColumn(String name) {
    return NAMES.contains(name);
  }

  private StructField field(String name) {
    for (StructField f : columns.fields()) {
      if (f.name().equals(name)) {
        return f;
      }
    }
    throw new IllegalArgumentException("no metadata column " + name + " in this table");
  }

  /** The schema with the metadata columns after its fields, in the reader's order. */
  StructType append(StructType schema, List<String> names) {
    StructType out = schema;
    for (String name : names) {
      out = out.add(field(name));
    }
    return out;
  }

  MetadataColumn[] all() {
    StructField[] fields = columns.fields();
    MetadataColumn[] out = new MetadataColumn[fields.length];
    for (int i = 0; i < fields.length; i++) {
      out[i] = column(fields[i]);
    }
    return out;
  }

  /**
   * How Spark carries a column through a row-level write: an updated row keeps its {@code
   * _row_id} in the row it re-inserts (preserved on update and reinsert) and gets a null {@code
   * _last_updated_sequence_number}, which the new file's sequence number then gives, as Java's
   * {@code SparkMetadataColumns}; the other columns have no such rule.
   */
  private static String preservation(String name) {
    if (ROW_ID.equals(name)) {
      return preserve(true, true, false);
    }
    if (LAST_UPDATED_SEQUENCE_NUMBER.equals(name)) {
      return preserve(false, false, false);
    }
    return null;
  }

  private static String preserve(boolean onReinsert, boolean onUpdate, boolean onDelete) {
    return "{\"" + MetadataColumn.PRESERVE_ON_REINSERT + "\":" + onReinsert
        + ",\"" + MetadataColumn.PRESERVE_ON_UPDATE + "\":" + onUpdate
        + ",\"" + MetadataColumn.PRESERVE_ON_DELETE + "\":" + onDelete + "}";
  }

  private static MetadataColumn column(StructField field) {
    return new MetadataColumn() {
      @Override
      public String name() {
        return field.name();
      }

      @Override
      public DataType dataType() {
        return field.dataType();
      }

      @Override
      public boolean isNullable() {
        return field.nullable();
      }

      @Override
      public String metadataInJSON() {
        return preservation(field.name());
      }
    };
  }
}
