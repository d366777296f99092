// Java Iceberg's projections and residuals for icefloe's conformance tests
// (tests/test_projection_oracle.py). Batches cross py4j as JSON text; results are bound
// expressions as ExpressionParser writes them, or "!error: ..." for an item Java rejects.
package icefloe.oracle;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.PartitionSpecParser;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.SingleValueParser;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.expressions.Binder;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.ExpressionParser;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.Projections;
import org.apache.iceberg.expressions.ResidualEvaluator;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.JsonNode;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.JsonUtil;

public final class IcefloeProjectionOracle {
  private IcefloeProjectionOracle() {}

  private static String error(Throwable e) {
    return ("!error: " + e).replace('\n', ' ');
  }

  private static JsonNode read(String json) {
    try {
      return JsonUtil.mapper().readTree(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String write(Object value) {
    try {
      return JsonUtil.mapper().writeValueAsString(value);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static List<String> strings(String jsonArray) {
    List<String> out = new ArrayList<>();
    for (JsonNode n : read(jsonArray)) {
      out.add(n.asText());
    }
    return out;
  }

  /** The partition type Java derives for the spec: [[name, type], ...]. */
  public static String partitionType(String schemaJson, String specJson) {
    Schema schema = SchemaParser.fromJson(schemaJson);
    PartitionSpec spec = PartitionSpecParser.fromJson(schema, specJson);
    List<List<String>> out = new ArrayList<>();
    for (Types.NestedField f : spec.partitionType().fields()) {
      out.add(List.of(f.name(), f.type().toString()));
    }
    return write(out);
  }

  /**
   * For each expression (a JSON array of expression JSON texts, read without a schema): the
   * expression bound to the schema ({@code bound}), and its inclusive and strict projections
   * bound to the partition type.
   */
  public static String project(
      String schemaJson, String specJson, String exprsJson, boolean caseSensitive) {
    Schema schema = SchemaParser.fromJson(schemaJson);
    PartitionSpec spec = PartitionSpecParser.fromJson(schema, specJson);
    Types.StructType partitionType = spec.partitionType();
    List<Map<String, String>> out = new ArrayList<>();
    for (String text : strings(exprsJson)) {
      Map<String, String> one = new LinkedHashMap<>();
      Expression expr;
      try {
        expr = ExpressionParser.fromJson(text);
      } catch (RuntimeException e) {
        one.put("bound", error(e));
        one.put("inclusive", error(e));
        one.put("strict", error(e));
        out.add(one);
        continue;
      }
      try {
        Expression bound =
            Binder.bind(schema.asStruct(), Expressions.rewriteNot(expr), caseSensitive);
        one.put("bound", ExpressionParser.toJson(bound));
      } catch (RuntimeException e) {
        one.put("bound", error(e));
      }
      try {
        Expression inc = Projections.inclusive(spec, caseSensitive).project(expr);
        one.put(
            "inclusive", ExpressionParser.toJson(Binder.bind(partitionType, inc, caseSensitive)));
      } catch (RuntimeException e) {
        one.put("inclusive", error(e));
      }
      try {
        Expression strict = Projections.strict(spec, caseSensitive).project(expr);
        one.put(
            "strict", ExpressionParser.toJson(Binder.bind(partitionType, strict, caseSensitive)));
      } catch (RuntimeException e) {
        one.put("strict", error(e));
      }
      out.add(one);
    }
    return write(out);
  }

  /** A partition tuple of Java values. */
  private static final class Row implements StructLike {
    private final Object[] values;

    Row(Object[] values) {
      this.values = values;
    }

    @Override
    public int size() {
      return values.length;
    }

    @Override
    public <T> T get(int pos, Class<T> javaClass) {
      return javaClass.cast(values[pos]);
    }

    @Override
    public <T> void set(int pos, T value) {
      values[pos] = value;
    }
  }

  /**
   * For each expression (NOT pushed down first, as icefloe's bound expressions are) and each
   * partition (a JSON array of single-value JSON per partition field, in Java's partition
   * type): {@code ResidualEvaluator.of(spec, expr, caseSensitive).residualFor(partition)}
   * bound to the schema.
   */
  public static String residuals(
      String schemaJson,
      String specJson,
      String exprsJson,
      String partitionsJson,
      boolean caseSensitive) {
    Schema schema = SchemaParser.fromJson(schemaJson);
    PartitionSpec spec = PartitionSpecParser.fromJson(schema, specJson);
    List<Types.NestedField> fields = spec.partitionType().fields();
    List<Row> rows = new ArrayList<>();
    for (JsonNode tuple : read(partitionsJson)) {
      Object[] values = new Object[fields.size()];
      for (int i = 0; i < fields.size(); i++) {
        JsonNode v = tuple.get(i);
        values[i] =
            v == null || v.isNull() ? null : SingleValueParser.fromJson(fields.get(i).type(), v);
      }
      rows.add(new Row(values));
    }
    List<List<String>> out = new ArrayList<>();
    for (String text : strings(exprsJson)) {
      List<String> results = new ArrayList<>();
      ResidualEvaluator evaluator;
      try {
        Expression expr = Expressions.rewriteNot(ExpressionParser.fromJson(text));
        evaluator = ResidualEvaluator.of(spec, expr, caseSensitive);
      } catch (RuntimeException e) {
        for (int i = 0; i < rows.size(); i++) {
          results.add(error(e));
        }
        out.add(results);
        continue;
      }
      for (Row row : rows) {
        try {
          Expression residual = evaluator.residualFor(row);
          results.add(
              ExpressionParser.toJson(Binder.bind(schema.asStruct(), residual, caseSensitive)));
        } catch (RuntimeException e) {
          results.add(error(e));
        }
      }
      out.add(results);
    }
    return write(out);
  }
}
