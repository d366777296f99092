package io.icefloe.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.CharType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.types.VarcharType;

/**
 * Spark's DDL in Iceberg terms, with the rules of Java Iceberg's SparkSchemaUtil and Spark3Util:
 * Spark types to Iceberg types (byte and short as int, char and varchar as string, timestamp as
 * timestamptz, timestamp_ntz as timestamp; ids are placeholders, the core assigns fresh ones),
 * {@code PARTITIONED BY} transforms to partition fields and back.
 */
final class Partitioning {
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private Partitioning() {}

  /** The Iceberg schema JSON of a Spark schema. */
  static ObjectNode schema(StructType struct) {
    int[] ids = {0};
    ObjectNode out = NODES.objectNode();
    out.put("type", "struct");
    out.put("schema-id", 0);
    out.set("fields", fields(struct, ids));
    return out;
  }

  private static ArrayNode fields(StructType struct, int[] ids) {
    ArrayNode out = NODES.arrayNode();
    List<ObjectNode> pending = new ArrayList<>();
    // Java's SparkSchemaUtil assigns a struct's field ids first, then its children's
    for (StructField f : struct.fields()) {
      ObjectNode field = NODES.objectNode();
      field.put("id", ++ids[0]);
      field.put("name", f.name());
      field.put("required", !f.nullable());
      pending.add(field);
      out.add(field);
    }
    for (int i = 0; i < struct.fields().length; i++) {
      StructField f = struct.fields()[i];
      pending.get(i).set("type", type(f.dataType(), ids));
      if (f.getComment().isDefined()) {
        pending.get(i).put("doc", f.getComment().get());
      }
    }
    return out;
  }

  /** The Iceberg type JSON of a Spark type (nested ids from {@code ids}). */
  static JsonNode type(DataType t, int[] ids) {
    if (t instanceof StructType) {
      ObjectNode out = NODES.objectNode();
      out.put("type", "struct");
      out.set("fields", fields((StructType) t, ids));
      return out;
    }
    if (t instanceof ArrayType) {
      ArrayType a = (ArrayType) t;
      ObjectNode out = NODES.objectNode();
      out.put("type", "list");
      out.put("element-id", ++ids[0]);
      out.set("element", type(a.elementType(), ids));
      out.put("element-required", !a.containsNull());
      return out;
    }
    if (t instanceof MapType) {
      MapType m = (MapType) t;
      ObjectNode out = NODES.objectNode();
      out.put("type", "map");
      out.put("key-id", ++ids[0]);
      out.put("value-id", ++ids[0]);
      out.set("key", type(m.keyType(), ids));
      out.set("value", type(m.valueType(), ids));
      out.put("value-required", !m.valueContainsNull());
      return out;
    }
    return NODES.textNode(primitive(t));
  }

  static String primitive(DataType t) {
    if (t instanceof BooleanType) {
      return "boolean";
    }
    if (t instanceof ByteType || t instanceof ShortType || t instanceof IntegerType) {
      return "int";
    }
    if (t instanceof LongType) {
      return "long";
    }
    if (t instanceof FloatType) {
      return "float";
    }
    if (t instanceof DoubleType) {
      return "double";
    }
    if (t instanceof DecimalType) {
      DecimalType d = (DecimalType) t;
      return "decimal(" + d.precision() + ", " + d.scale() + ")";
    }
    if (t instanceof DateType) {
      return "date";
    }
    if (t instanceof TimestampType) {
      return "timestamptz";
    }
    if (t instanceof TimestampNTZType) {
      return "timestamp";
    }
    if (t instanceof StringType || t instanceof CharType || t instanceof VarcharType) {
      return "string";
    }
    if (t instanceof BinaryType) {
      return "binary";
    }
    throw new UnsupportedOperationException("Cannot convert Spark type to Iceberg: " + t.simpleString());
  }

  /** {@code PARTITIONED BY} as {@code [[column, transform], ...]} (Java's Spark3Util rules). */
  static ArrayNode partitioning(Transform[] transforms) {
    ArrayNode out = NODES.arrayNode();
    for (Transform t : transforms) {
      String column = null;
      Integer width = null;
      for (Expression arg : t.arguments()) {
        if (arg instanceof NamedReference) {
          column = String.join(".", ((NamedReference) arg).fieldNames());
        } else if (arg instanceof Literal && ((Literal<?>) arg).value() instanceof Number) {
          width = ((Number) ((Literal<?>) arg).value()).intValue();
        }
      }
      if (column == null) {
        throw new UnsupportedOperationException("Unsupported partition transform: " + t.describe());
      }
      String transform;
      switch (t.name().toLowerCase()) {
        case "identity":
          transform = "identity";
          break;
        case "bucket":
          transform = "bucket[" + width + "]";
          break;
        case "truncate":
          transform = "truncate[" + width + "]";
          break;
        case "years":
        case "year":
          transform = "year";
          break;
        case "months":
        case "month":
          transform = "month";
          break;
        case "days":
        case "day":
        case "date":
          transform = "day";
          break;
        case "hours":
        case "hour":
        case "date_hour":
          transform = "hour";
          break;
        default:
          throw new UnsupportedOperationException("Unsupported partition transform: " + t.describe());
      }
      if ((transform.startsWith("bucket") || transform.startsWith("truncate")) && width == null) {
        throw new UnsupportedOperationException("Unsupported partition transform: " + t.describe());
      }
      ArrayNode field = out.addArray();
      field.add(column);
      field.add(transform);
    }
    return out;
  }

  /** A table's default spec as Spark transforms (Java's Spark3Util.toTransforms). */
  static Transform[] toSpark(JsonNode spec, JsonNode schema) {
    if (spec == null || spec.isNull()) {
      return new Transform[0];
    }
    Map<Integer, String> names = new HashMap<>();
    collectNames(schema.get("fields"), "", names);
    List<Transform> out = new ArrayList<>();
    for (JsonNode f : spec.path("fields")) {
      String column = names.get(f.path("source-id").asInt());
      String transform = f.path("transform").asText();
      if (column == null) {
        continue;
      }
      if (transform.equals("identity")) {
        out.add(Expressions.identity(column));
      } else if (transform.startsWith("bucket[")) {
        out.add(Expressions.bucket(width(transform), column));
      } else if (transform.startsWith("truncate[")) {
        out.add(
            Expressions.apply(
                "truncate", Expressions.literal(width(transform)), Expressions.column(column)));
      } else if (transform.equals("year")) {
        out.add(Expressions.years(column));
      } else if (transform.equals("month")) {
        out.add(Expressions.months(column));
      } else if (transform.equals("day")) {
        out.add(Expressions.days(column));
      } else if (transform.equals("hour")) {
        out.add(Expressions.hours(column));
      }
      // void fields have no Spark transform (Java leaves them out too)
    }
    return out.toArray(new Transform[0]);
  }

  private static int width(String transform) {
    return Integer.parseInt(transform.substring(transform.indexOf('[') + 1, transform.indexOf(']')).trim());
  }

  static void collectNames(JsonNode fields, String parent, Map<Integer, String> out) {
    if (fields == null) {
      return;
    }
    for (JsonNode f : fields) {
      String name = parent.isEmpty() ? f.path("name").asText() : parent + "." + f.path("name").asText();
      out.put(f.path("id").asInt(), name);
      JsonNode type = f.get("type");
      if (type != null && type.isObject() && "struct".equals(type.path("type").asText())) {
        collectNames(type.get("fields"), name, out);
      }
    }
  }
}
