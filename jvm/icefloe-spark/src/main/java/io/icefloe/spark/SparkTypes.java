package io.icefloe.spark;

import com.fasterxml.jackson.databind.JsonNode;
import io.icefloe.spark.jni.IcefloeUnsupportedException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.MetadataBuilder;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Iceberg schemas (their JSON form) as Spark types, with the rules of Java Iceberg's
 * TypeToSparkType that icefloe's Python data source follows too (python/icefloe/spark/types.py):
 * uuid as string, fixed as binary, timestamptz as TimestampType, timestamp as TimestampNTZType,
 * unknown as NullType; time, nanosecond timestamps, geometry and geography are refused.
 */
public final class SparkTypes {
  private static final Pattern DECIMAL = Pattern.compile("decimal\\(\\s*(\\d+)\\s*,\\s*(\\d+)\\s*\\)");
  private static final Pattern FIXED = Pattern.compile("fixed\\[\\s*(\\d+)\\s*\\]");

  private SparkTypes() {}

  /** The Spark schema of an Iceberg schema (or struct) in its JSON form. */
  public static StructType schema(JsonNode schema) {
    return struct(schema.get("fields"), "");
  }

  private static StructType struct(JsonNode fields, String parent) {
    List<StructField> out = new ArrayList<>();
    for (JsonNode field : fields) {
      String name = field.get("name").asText();
      String path = parent.isEmpty() ? name : parent + "." + name;
      Metadata metadata = Metadata.empty();
      if (field.hasNonNull("doc") && !field.get("doc").asText().isEmpty()) {
        metadata = new MetadataBuilder().putString("comment", field.get("doc").asText()).build();
      }
      boolean required = field.path("required").asBoolean(false);
      out.add(new StructField(name, type(field.get("type"), path), !required, metadata));
    }
    return new StructType(out.toArray(new StructField[0]));
  }

  /** The Spark type of an Iceberg type in its JSON form (a string or a nested object). */
  public static DataType type(JsonNode type, String path) {
    if (type.isObject()) {
      String kind = type.path("type").asText();
      switch (kind) {
        case "struct":
          return struct(type.get("fields"), path);
        case "list":
          return DataTypes.createArrayType(
              type(type.get("element"), path + ".element"),
              !type.path("element-required").asBoolean(false));
        case "map":
          return DataTypes.createMapType(
              type(type.get("key"), path + ".key"),
              type(type.get("value"), path + ".value"),
              !type.path("value-required").asBoolean(false));
        default:
          throw new IcefloeUnsupportedException(
              "column '" + path + "': unknown nested type '" + kind + "'");
      }
    }
    String t = type.asText();
    switch (t) {
      case "boolean":
        return DataTypes.BooleanType;
      case "int":
        return DataTypes.IntegerType;
      case "long":
        return DataTypes.LongType;
      case "float":
        return DataTypes.FloatType;
      case "double":
        return DataTypes.DoubleType;
      case "date":
        return DataTypes.DateType;
      case "timestamptz":
        return DataTypes.TimestampType;
      case "timestamp":
        return DataTypes.TimestampNTZType;
      case "string":
      case "uuid":
        return DataTypes.StringType;
      case "binary":
        return DataTypes.BinaryType;
      case "unknown":
        return DataTypes.NullType;
      case "variant":
        return DataTypes.VariantType;
      default:
        break;
    }
    Matcher decimal = DECIMAL.matcher(t);
    if (decimal.matches()) {
      return DataTypes.createDecimalType(
          Integer.parseInt(decimal.group(1)), Integer.parseInt(decimal.group(2)));
    }
    if (FIXED.matcher(t).matches()) {
      return DataTypes.BinaryType;
    }
    // time, nanosecond timestamps, geometry and geography: Java's Spark integration refuses
    // them too (Spark has no type to read them into without loss)
    throw new IcefloeUnsupportedException("column '" + path + "': Spark cannot read Iceberg type " + t);
  }

  /**
   * What kind of predicates a column of this Iceberg type takes (see Filters): "ordered" when
   * Iceberg and Spark order its values alike, "nulls" for null checks only.
   */
  static String kind(JsonNode type) {
    if (type.isObject()) {
      return "nulls";
    }
    String t = type.asText();
    switch (t) {
      case "boolean":
      case "int":
      case "long":
      case "date":
      case "timestamp":
      case "timestamptz":
      case "string":
      case "binary":
        return "ordered";
      default:
        return DECIMAL.matcher(t).matches() || FIXED.matcher(t).matches() ? "ordered" : "nulls";
    }
  }
}
