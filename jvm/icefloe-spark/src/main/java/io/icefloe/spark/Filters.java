package io.icefloe.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * Spark's V2 predicates as icefloe row filters (the expression JSON form), for pruning only.
 *
 * <p>The rules are those of the Python data source (python/icefloe/spark/filters.py): a
 * predicate is translated only when its translation keeps every row Spark's predicate keeps, so
 * that planning, which prunes files by partition values and column metrics, never drops a row
 * Spark wants. Iceberg and Spark order integers, decimals, dates, timestamps, strings and binary
 * alike, so comparisons on those translate; floats (-0.0 and NaN) and uuids (Java's metrics
 * compare uuid bounds as signed longs) take null checks only, and so do structs, lists and maps.
 * Negations are translated so that a null may pass, never the other way round ({@code NOT (a
 * <=> v)} keeps the rows where a is null). A literal whose type is not the column's is left to
 * Spark, and so is anything the table's schema does not bind.
 *
 * <p>The executors' reader applies each file's residual (Iceberg's semantics); Spark evaluates
 * every predicate again after the scan with its own, except those {@link #complete} ones that
 * the plan shows to select whole files (as Java Iceberg's SparkScanBuilder keeps predicates that
 * select whole partitions from Spark).
 */
final class Filters {
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final DateTimeFormatter MICROS =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS");

  private Filters() {}

  /** The filter for a predicate over the Iceberg schema, or null when it is not translated. */
  static JsonNode translate(Predicate predicate, JsonNode schema) {
    try {
      return translate(predicate, schema, false);
    } catch (RuntimeException e) {
      return null; // a value that does not convert: leave the predicate to Spark
    }
  }

  /**
   * Whether a predicate translates whole: {@link #translate} drops an untranslatable side of a
   * conjunction, which only widens the filter; a complete translation drops nothing. When the
   * pushed filter selects whole files (every task's residual true, no null partition value),
   * every row read passes a completely translated predicate: its columns are then partition
   * sources with non-null values, on which Iceberg and Spark agree for the types translated.
   */
  static boolean complete(Predicate predicate, JsonNode schema) {
    try {
      return complete(predicate, schema, false);
    } catch (RuntimeException e) {
      return false;
    }
  }

  private static boolean complete(Predicate p, JsonNode schema, boolean negated) {
    Expression[] children = p.children();
    switch (p.name()) {
      case "ALWAYS_TRUE":
      case "ALWAYS_FALSE":
        return true;
      case "NOT":
        return children[0] instanceof Predicate
            && complete((Predicate) children[0], schema, !negated);
      case "AND":
      case "OR":
        return children[0] instanceof Predicate
            && children[1] instanceof Predicate
            && complete((Predicate) children[0], schema, negated)
            && complete((Predicate) children[1], schema, negated);
      default:
        return leaf(p, children, schema, negated) != null;
    }
  }

  private static JsonNode translate(Predicate p, JsonNode schema, boolean negated) {
    Expression[] children = p.children();
    switch (p.name()) {
      case "ALWAYS_TRUE":
        return BooleanNode.valueOf(!negated);
      case "ALWAYS_FALSE":
        return BooleanNode.valueOf(negated);
      case "NOT":
        return children[0] instanceof Predicate
            ? translate((Predicate) children[0], schema, !negated)
            : null;
      case "AND":
      case "OR":
        {
          if (!(children[0] instanceof Predicate) || !(children[1] instanceof Predicate)) {
            return null;
          }
          JsonNode left = translate((Predicate) children[0], schema, negated);
          JsonNode right = translate((Predicate) children[1], schema, negated);
          // NOT (a AND b) is NOT a OR NOT b
          boolean conjunction = p.name().equals("AND") != negated;
          if (conjunction) {
            // dropping one side of a conjunction only widens it
            if (left == null) {
              return right;
            }
            return right == null ? left : binary("and", left, right);
          }
          return left == null || right == null ? null : binary("or", left, right);
        }
      default:
        return leaf(p, children, schema, negated);
    }
  }

  private static JsonNode leaf(Predicate p, Expression[] children, JsonNode schema, boolean negated) {
    if (children.length == 0 || !(children[0] instanceof NamedReference)) {
      // a literal on the left of a comparison: swap it to the right
      if (children.length == 2
          && children[0] instanceof Literal
          && children[1] instanceof NamedReference) {
        String flipped = flip(p.name());
        return flipped == null
            ? null
            : leaf(new Predicate(flipped, new Expression[] {children[1], children[0]}), new Expression[] {children[1], children[0]}, schema, negated);
      }
      return null;
    }
    String[] path = ((NamedReference) children[0]).fieldNames();
    JsonNode column = column(schema, path);
    if (column == null) {
      return null;
    }
    String name = String.join(".", path);
    JsonNode type = column.get("type");
    boolean ordered = SparkTypes.kind(type).equals("ordered");
    switch (p.name()) {
      case "IS_NULL":
        return unary(negated ? "not-null" : "is-null", name);
      case "IS_NOT_NULL":
        return unary(negated ? "is-null" : "not-null", name);
      default:
        break;
    }
    if (!ordered) {
      return null;
    }
    switch (p.name()) {
      case "<=>":
        {
          Literal<?> literal = literal(children, 1);
          if (literal == null) {
            return null;
          }
          if (literal.value() == null) {
            return unary(negated ? "not-null" : "is-null", name);
          }
          JsonNode value = value(literal, type);
          if (value == null) {
            return null;
          }
          // NOT (a <=> v) keeps the rows where a is null
          return negated
              ? binary("or", unary("is-null", name), predicate("not-eq", name, value))
              : predicate("eq", name, value);
        }
      case "=":
      case "<>":
        {
          Literal<?> literal = literal(children, 1);
          JsonNode value = literal == null ? null : value(literal, type);
          if (value == null) {
            return null;
          }
          boolean equal = p.name().equals("=") != negated;
          return predicate(equal ? "eq" : "not-eq", name, value);
        }
      case "<":
        return comparison(children, type, name, negated ? "gt-eq" : "lt");
      case "<=":
        return comparison(children, type, name, negated ? "gt" : "lt-eq");
      case ">":
        return comparison(children, type, name, negated ? "lt-eq" : "gt");
      case ">=":
        return comparison(children, type, name, negated ? "lt" : "gt-eq");
      case "STARTS_WITH":
        {
          Literal<?> literal = literal(children, 1);
          if (!"string".equals(type.asText()) || literal == null) {
            return null;
          }
          JsonNode value = value(literal, type);
          return value == null
              ? null
              : predicate(negated ? "not-starts-with" : "starts-with", name, value);
        }
      case "IN":
        {
          List<JsonNode> values = new ArrayList<>();
          boolean sawNull = false;
          for (int i = 1; i < children.length; i++) {
            Literal<?> literal = literal(children, i);
            if (literal == null) {
              return null;
            }
            if (literal.value() == null) {
              sawNull = true;
              continue;
            }
            JsonNode value = value(literal, type);
            if (value == null) {
              return null;
            }
            values.add(value);
          }
          if (negated) {
            // NOT (a IN (.., NULL)) is never true
            if (sawNull) {
              return BooleanNode.FALSE;
            }
            return values.isEmpty() ? unary("not-null", name) : set("not-in", name, values);
          }
          return values.isEmpty() ? BooleanNode.FALSE : set("in", name, values);
        }
      default:
        return null;
    }
  }

  private static String flip(String op) {
    switch (op) {
      case "=":
      case "<>":
      case "<=>":
        return op;
      case "<":
        return ">";
      case "<=":
        return ">=";
      case ">":
        return "<";
      case ">=":
        return "<=";
      default:
        return null;
    }
  }

  private static JsonNode comparison(Expression[] children, JsonNode type, String name, String op) {
    Literal<?> literal = literal(children, 1);
    JsonNode value = literal == null ? null : value(literal, type);
    return value == null ? null : predicate(op, name, value);
  }

  private static Literal<?> literal(Expression[] children, int i) {
    return i < children.length && children[i] instanceof Literal ? (Literal<?>) children[i] : null;
  }

  /** The field at a path of struct fields, or null (a dotted name would be ambiguous). */
  static JsonNode column(JsonNode schema, String[] path) {
    JsonNode fields = schema.get("fields");
    JsonNode found = null;
    for (String part : path) {
      if (fields == null || part.contains(".")) {
        return null;
      }
      found = null;
      for (JsonNode f : fields) {
        if (f.get("name").asText().equals(part)) {
          found = f;
          break;
        }
      }
      if (found == null) {
        return null;
      }
      JsonNode type = found.get("type");
      fields = type.isObject() && "struct".equals(type.path("type").asText()) ? type.get("fields") : null;
    }
    return found;
  }

  /**
   * A literal in the JSON form icefloe reads by the column's type (Appendix D forms for
   * dates, timestamps, decimals and binary), or null when its Spark type is not the column's.
   */
  static JsonNode value(Literal<?> literal, JsonNode icebergType) {
    Object v = literal.value();
    DataType t = literal.dataType();
    if (v == null) {
      return null;
    }
    String column = icebergType.asText();
    if (t instanceof BooleanType && column.equals("boolean")) {
      return BooleanNode.valueOf((Boolean) v);
    }
    if ((t instanceof IntegerType || t instanceof ShortType || t instanceof ByteType)
        && (column.equals("int") || column.equals("long"))) {
      return NODES.numberNode(((Number) v).longValue());
    }
    if (t instanceof LongType && column.equals("long")) {
      return NODES.numberNode((Long) v);
    }
    if (t instanceof StringType && column.equals("string")) {
      return NODES.textNode(v.toString());
    }
    if (t instanceof DateType && column.equals("date")) {
      return NODES.textNode(LocalDate.ofEpochDay((Integer) v).toString());
    }
    if (t instanceof TimestampType && column.equals("timestamptz")) {
      return NODES.textNode(iso((Long) v) + "+00:00");
    }
    if (t instanceof TimestampNTZType && column.equals("timestamp")) {
      return NODES.textNode(iso((Long) v));
    }
    if (t instanceof DecimalType && column.startsWith("decimal")) {
      return NODES.textNode(((Decimal) v).toJavaBigDecimal().toPlainString());
    }
    if (t instanceof BinaryType && (column.equals("binary") || column.startsWith("fixed"))) {
      StringBuilder hex = new StringBuilder();
      for (byte b : (byte[]) v) {
        hex.append(String.format("%02X", b));
      }
      return NODES.textNode(hex.toString());
    }
    return null;
  }

  private static String iso(long micros) {
    long seconds = Math.floorDiv(micros, 1_000_000L);
    int nanos = (int) Math.floorMod(micros, 1_000_000L) * 1000;
    return LocalDateTime.ofEpochSecond(seconds, nanos, ZoneOffset.UTC).format(MICROS);
  }

  private static ObjectNode unary(String op, String name) {
    ObjectNode node = NODES.objectNode();
    node.put("type", op);
    node.put("term", name);
    return node;
  }

  private static ObjectNode predicate(String op, String name, JsonNode value) {
    ObjectNode node = unary(op, name);
    node.set("value", value);
    return node;
  }

  private static ObjectNode set(String op, String name, List<JsonNode> values) {
    ObjectNode node = unary(op, name);
    ArrayNode array = node.putArray("values");
    values.forEach(array::add);
    return node;
  }

  static ObjectNode binary(String op, JsonNode left, JsonNode right) {
    ObjectNode node = NODES.objectNode();
    node.put("type", op);
    node.set("left", left);
    node.set("right", right);
    return node;
  }
}
