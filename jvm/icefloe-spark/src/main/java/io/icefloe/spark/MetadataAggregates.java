package io.icefloe.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.icefloe.spark.jni.Json;
import io.icefloe.spark.jni.NativeTable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.aggregate.AggregateFunc;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.expressions.aggregate.Count;
import org.apache.spark.sql.connector.expressions.aggregate.CountStar;
import org.apache.spark.sql.connector.expressions.aggregate.Max;
import org.apache.spark.sql.connector.expressions.aggregate.Min;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * {@code COUNT(*)}, {@code COUNT(col)}, {@code MIN(col)} and {@code MAX(col)} without grouping,
 * answered from the planned files' metadata by the Rust core with Java's rules
 * (crates/icefloe/src/scan/aggregate.rs): no deletes, metrics that keep what the aggregate needs,
 * no truncatable bounds (strings, binary), a filter only when it selects whole files. Anything
 * else (DISTINCT, expressions, grouping) is read.
 */
final class MetadataAggregates {
  private MetadataAggregates() {}

  /** The scan answering the aggregation, or null when the rows must be read. */
  static AggregateScan scan(
      String name, NativeTable table, ObjectNode scanRequest, Aggregation aggregation) {
    if (aggregation.groupByExpressions().length != 0) {
      return null;
    }
    ObjectNode request = scanRequest.deepCopy();
    request.remove("selected");
    ArrayNode aggregates = request.putArray("aggregates");
    List<String> described = new ArrayList<>();
    for (AggregateFunc f : aggregation.aggregateExpressions()) {
      ObjectNode a = aggregates.addObject();
      if (f instanceof CountStar) {
        a.put("op", "count-star");
        described.add("count(*)");
        continue;
      }
      Expression column;
      String op;
      if (f instanceof Count && !((Count) f).isDistinct()) {
        op = "count";
        column = ((Count) f).column();
      } else if (f instanceof Min) {
        op = "min";
        column = ((Min) f).column();
      } else if (f instanceof Max) {
        op = "max";
        column = ((Max) f).column();
      } else {
        return null;
      }
      if (!(column instanceof NamedReference)) {
        return null;
      }
      String columnName = String.join(".", ((NamedReference) column).fieldNames());
      a.put("op", op);
      a.put("column", columnName);
      described.add(op + "(" + columnName + ")");
    }
    JsonNode answer;
    try {
      answer = table.aggregate(Json.write(request));
    } catch (RuntimeException e) {
      return null; // a column that does not resolve, say: Spark reads the rows
    }
    if (answer == null || answer.isNull()) {
      return null;
    }
    JsonNode values = answer.get("values");
    JsonNode types = answer.get("types");
    StructField[] fields = new StructField[values.size()];
    Object[] row = new Object[values.size()];
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < values.size(); i++) {
      DataType type = SparkTypes.type(types.get(i), described.get(i));
      fields[i] = DataTypes.createStructField(described.get(i), type, true);
      row[i] = value(values.get(i), type);
      text.append(i == 0 ? "" : ", ").append(described.get(i)).append('=').append(row[i]);
    }
    return new AggregateScan(name, new StructType(fields), row, text.toString());
  }

  /** A value as Spark's InternalRow holds it, from the JSON form the native side gives. */
  private static Object value(JsonNode v, DataType type) {
    if (v == null || v.isNull()) {
      return null;
    }
    if (type instanceof DecimalType) {
      DecimalType d = (DecimalType) type;
      return Decimal.apply(
          new BigDecimal(new BigInteger(v.asText()), d.scale()), d.precision(), d.scale());
    }
    if (type.equals(DataTypes.BooleanType)) {
      return v.asBoolean();
    }
    if (type.equals(DataTypes.IntegerType) || type.equals(DataTypes.DateType)) {
      return v.asInt();
    }
    if (type.equals(DataTypes.FloatType)) {
      return Float.intBitsToFloat((int) v.asLong());
    }
    if (type.equals(DataTypes.DoubleType)) {
      return Double.longBitsToDouble(v.bigIntegerValue().longValue());
    }
    // long, timestamp (micros), timestamp_ntz (micros)
    return v.asLong();
  }
}
