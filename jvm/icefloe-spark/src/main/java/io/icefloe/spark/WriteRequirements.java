package io.icefloe.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.connector.distributions.Distribution;
import org.apache.spark.sql.connector.distributions.Distributions;
import org.apache.spark.sql.connector.distributions.UnspecifiedDistribution;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.NullOrdering;
import org.apache.spark.sql.connector.expressions.SortDirection;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.write.RowLevelOperation;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The distribution and ordering a batch write asks of Spark, as Java's SparkWriteConf and
 * SparkWriteUtil decide them for appends and overwrites:
 *
 * <ul>
 *   <li>the mode: the write option {@code distribution-mode}, else the session's {@code
 *       spark.sql.iceberg.distribution-mode}, else the table's {@code write.distribution-mode}
 *       (then {@code range} becomes {@code none} for an unpartitioned unsorted table, {@code
 *       hash} becomes {@code none} for an unpartitioned one), else {@code range} for a sorted
 *       table, {@code hash} for a partitioned one, {@code none} otherwise;
 *   <li>{@code hash}: rows clustered by the partition transforms (the rows of a partition meet in
 *       one task, so it writes one file per partition rather than each task one); {@code range}:
 *       rows ordered by the table's ordering (the partition transforms the sort order does not
 *       already cluster by, then the sort order); {@code none}: no requirement;
 *   <li>within a task, the table's ordering when the table is sorted or fanout writers are off
 *       ({@code fanout-enabled}, {@code write.spark.fanout.enabled}; on by default);
 *   <li>{@code use-table-distribution-and-ordering=false} (a write option) asks for nothing.
 * </ul>
 *
 * Spark evaluates the transforms with icefloe's functions ({@link TransformFunctions}, served by
 * the SparkCatalog); a transform they cannot evaluate (a column type they do not take) makes the
 * write ask for nothing rather than fail.
 */
final class WriteRequirements {
  static final WriteRequirements NONE = new WriteRequirements(Distributions.unspecified(), new SortOrder[0], 0);

  final Distribution distribution;
  final SortOrder[] ordering;
  /** The shuffle partition size Spark should aim at (0: Spark's own; none without a distribution). */
  final long advisoryPartitionSize;

  private WriteRequirements(Distribution distribution, SortOrder[] ordering, long advisoryPartitionSize) {
    this.distribution = distribution;
    this.ordering = ordering;
    // Spark refuses an advisory size without a distribution, as Java's SparkWriteRequirements
    this.advisoryPartitionSize =
        distribution instanceof UnspecifiedDistribution ? 0 : advisoryPartitionSize;
  }

  static WriteRequirements of(JsonNode info, CaseInsensitiveStringMap options) {
    if ("false".equalsIgnoreCase(options.getOrDefault("use-table-distribution-and-ordering", "true"))) {
      return NONE;
    }
    JsonNode schema = info.get("schema");
    JsonNode spec = info.get("spec");
    JsonNode order = info.get("sort-order");
    JsonNode properties = info.path("properties");
    Transform[] clustering = Partitioning.toSpark(spec, schema);
    boolean partitioned = clustering.length > 0;
    boolean sorted = order != null && order.path("fields").size() > 0;
    String mode = options.get("distribution-mode");
    if (mode == null) {
      mode = SQLConf.get().getConfString("spark.sql.iceberg.distribution-mode", null);
    }
    if (mode == null && properties.has("write.distribution-mode")) {
      mode = properties.get("write.distribution-mode").asText();
    }
    if (mode == null) {
      mode = sorted ? "range" : partitioned ? "hash" : "none";
    } else {
      mode = mode.toLowerCase(Locale.ROOT);
      if (mode.equals("range") && !partitioned && !sorted) {
        mode = "none";
      } else if (mode.equals("hash") && !partitioned) {
        mode = "none";
      }
    }
    SortOrder[] tableOrdering = ordering(spec, order, schema);
    StructType sparkSchema = SparkTypes.schema(schema);
    if (!evaluable(clustering, sparkSchema) || !evaluable(expressions(tableOrdering), sparkSchema)) {
      return NONE;
    }
    Distribution distribution;
    switch (mode) {
      case "none":
        distribution = Distributions.unspecified();
        break;
      case "hash":
        distribution = Distributions.clustered(clustering);
        break;
      case "range":
        distribution = Distributions.ordered(tableOrdering);
        break;
      default:
        throw new IllegalArgumentException("Unsupported distribution mode: " + mode);
    }
    String fanout = options.get("fanout-enabled");
    if (fanout == null && properties.has("write.spark.fanout.enabled")) {
      fanout = properties.get("write.spark.fanout.enabled").asText();
    }
    boolean fanoutEnabled = fanout == null || Boolean.parseBoolean(fanout);
    SortOrder[] local = fanoutEnabled && !sorted ? new SortOrder[0] : tableOrdering;
    return new WriteRequirements(distribution, local, AdvisorySize.data(info, options));
  }

  /**
   * The requirements of a merge-on-read {@code DELETE}, {@code UPDATE} or {@code MERGE}, as
   * Java's SparkWriteConf.positionDeltaRequirements and SparkWriteUtil decide them:
   *
   * <ul>
   *   <li>the mode: the write option {@code distribution-mode}, else the session's {@code
   *       spark.sql.iceberg.distribution-mode}, else the table's {@code
   *       write.<command>.distribution-mode}, else {@code hash} (no adjustment by the table's
   *       partitioning or order, unlike appends);
   *   <li>the deleted rows are clustered by {@code _spec_id} and {@code _partition} (and
   *       {@code _file} for an unpartitioned table), which keeps each data file's deletes in
   *       one task; the rows an {@code UPDATE} or {@code MERGE} inserts (null metadata
   *       columns) by the table's partition transforms after those, so that the rows of a
   *       partition meet in one task rather than all inserts in one (their metadata columns
   *       are the same nulls) or each task writing a file per partition; {@code range} orders
   *       by the same columns and the table's ordering instead;
   *   <li>within a task, nothing when fanout writers are on and the table unsorted, else
   *       {@code _spec_id}, {@code _partition}, {@code _file}, {@code _pos} (then the table's
   *       ordering for inserted rows).
   * </ul>
   */
  static WriteRequirements positionDelta(
      JsonNode info, CaseInsensitiveStringMap options, RowLevelOperation.Command command) {
    if ("false".equalsIgnoreCase(options.getOrDefault("use-table-distribution-and-ordering", "true"))) {
      return NONE;
    }
    JsonNode schema = info.get("schema");
    JsonNode spec = info.get("spec");
    JsonNode order = info.get("sort-order");
    JsonNode properties = info.path("properties");
    boolean dataRows = command == RowLevelOperation.Command.UPDATE || command == RowLevelOperation.Command.MERGE;
    String mode = options.get("distribution-mode");
    if (mode == null) {
      mode = SQLConf.get().getConfString("spark.sql.iceberg.distribution-mode", null);
    }
    String property = "write." + command.toString().toLowerCase(Locale.ROOT) + ".distribution-mode";
    if (mode == null && properties.has(property)) {
      mode = properties.get(property).asText();
    }
    mode = mode == null ? "hash" : mode.toLowerCase(Locale.ROOT);
    Transform[] clustering = Partitioning.toSpark(spec, schema);
    boolean partitioned = clustering.length > 0;
    boolean sorted = order != null && order.path("fields").size() > 0;
    SortOrder[] tableOrdering = ordering(spec, order, schema);
    StructType sparkSchema = SparkTypes.schema(schema);
    if (!dataRows || !evaluable(clustering, sparkSchema) || !evaluable(expressions(tableOrdering), sparkSchema)) {
      // deletes only (or transforms icefloe's functions cannot evaluate: the inserted rows
      // then go unclustered, as before, rather than the write failing)
      clustering = new Transform[0];
      tableOrdering = new SortOrder[0];
    }
    NamedReference specId = Expressions.column("_spec_id");
    NamedReference partition = Expressions.column("_partition");
    NamedReference file = Expressions.column(MetadataColumns.FILE);
    NamedReference pos = Expressions.column(MetadataColumns.POS);
    Expression[] deleteClustering =
        partitioned ? new Expression[] {specId, partition} : new Expression[] {specId, partition, file};
    Distribution distribution;
    switch (mode) {
      case "none":
        distribution = Distributions.unspecified();
        break;
      case "hash":
        distribution = Distributions.clustered(concat(deleteClustering, clustering));
        break;
      case "range":
        distribution = Distributions.ordered(concat(ascending(deleteClustering), tableOrdering));
        break;
      default:
        throw new IllegalArgumentException("Unsupported distribution mode: " + mode);
    }
    String fanout = options.get("fanout-enabled");
    if (fanout == null && properties.has("write.spark.fanout.enabled")) {
      fanout = properties.get("write.spark.fanout.enabled").asText();
    }
    boolean fanoutEnabled = fanout == null || Boolean.parseBoolean(fanout);
    SortOrder[] local;
    if (fanoutEnabled && (!dataRows || !sorted)) {
      local = new SortOrder[0];
    } else {
      local = concat(ascending(new Expression[] {specId, partition, file, pos}), tableOrdering);
    }
    long advisory =
        dataRows ? AdvisorySize.data(info, options) : AdvisorySize.deletes(info, options);
    return new WriteRequirements(distribution, local, advisory);
  }

  private static SortOrder[] ascending(Expression[] expressions) {
    SortOrder[] out = new SortOrder[expressions.length];
    for (int i = 0; i < expressions.length; i++) {
      out[i] = Expressions.sort(expressions[i], SortDirection.ASCENDING, NullOrdering.NULLS_FIRST);
    }
    return out;
  }

  private static Expression[] concat(Expression[] a, Expression[] b) {
    Expression[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private static SortOrder[] concat(SortOrder[] a, SortOrder[] b) {
    SortOrder[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private static Expression[] expressions(SortOrder[] ordering) {
    Expression[] out = new Expression[ordering.length];
    for (int i = 0; i < ordering.length; i++) {
      out[i] = ordering[i].expression();
    }
    return out;
  }

  /** Whether icefloe's functions evaluate every transform on its column's type. */
  private static boolean evaluable(Expression[] expressions, StructType schema) {
    for (Expression e : expressions) {
      if (e instanceof NamedReference) {
        continue;
      }
      if (!(e instanceof Transform)) {
        return false;
      }
      Transform t = (Transform) e;
      if (t.name().equals("identity")) {
        continue;
      }
      NamedReference[] refs = t.references();
      if (refs.length != 1) {
        return false;
      }
      DataType type = typeOf(schema, refs[0].fieldNames());
      if (type == null || !TransformFunctions.accepts(t.name(), type)) {
        return false;
      }
    }
    return true;
  }

  private static DataType typeOf(StructType schema, String[] path) {
    DataType t = schema;
    for (String name : path) {
      if (!(t instanceof StructType)) {
        return null;
      }
      DataType found = null;
      for (org.apache.spark.sql.types.StructField f : ((StructType) t).fields()) {
        if (f.name().equalsIgnoreCase(name) && (found == null || f.name().equals(name))) {
          found = f.dataType();
        }
      }
      if (found == null) {
        return null;
      }
      t = found;
    }
    return t;
  }

  /**
   * Java's SortOrderUtil.buildSortOrder: the partition fields (but those that other partition
   * fields, or a prefix of the sort order, already cluster by) ascending with nulls first, then the
   * sort order's fields.
   */
  private static SortOrder[] ordering(JsonNode spec, JsonNode order, JsonNode schema) {
    Map<Integer, String> names = new HashMap<>();
    Partitioning.collectNames(schema.get("fields"), "", names);
    Map<String, JsonNode> required = new LinkedHashMap<>();
    List<JsonNode> specFields = new ArrayList<>();
    if (spec != null && !spec.isNull()) {
      spec.path("fields").forEach(specFields::add);
    }
    for (JsonNode f : specFields) {
      if (!f.path("transform").asText().equals("void")) {
        required.put(key(f), f);
      }
    }
    for (JsonNode a : specFields) {
      for (JsonNode b : specFields) {
        if (a != b && sameSource(a, b) && satisfiesOrderOf(a.path("transform").asText(), b.path("transform").asText())) {
          required.remove(key(b));
        }
      }
    }
    List<JsonNode> sortFields = new ArrayList<>();
    if (order != null && !order.isNull()) {
      order.path("fields").forEach(sortFields::add);
    }
    for (JsonNode s : sortFields) {
      if (required.containsKey(key(s))) {
        required.remove(key(s));
        continue;
      }
      for (JsonNode f : specFields) {
        if (sameSource(s, f) && satisfiesOrderOf(s.path("transform").asText(), f.path("transform").asText())) {
          required.remove(key(f));
        }
      }
      break;
    }
    List<SortOrder> out = new ArrayList<>();
    for (JsonNode f : required.values()) {
      Expression e = transform(f, names);
      if (e != null) {
        out.add(Expressions.sort(e, SortDirection.ASCENDING, NullOrdering.NULLS_FIRST));
      }
    }
    for (JsonNode s : sortFields) {
      Expression e = transform(s, names);
      if (e == null) {
        continue;
      }
      SortDirection direction =
          s.path("direction").asText("asc").equals("desc") ? SortDirection.DESCENDING : SortDirection.ASCENDING;
      NullOrdering nulls =
          s.path("null-order").asText("nulls-first").equals("nulls-last")
              ? NullOrdering.NULLS_LAST
              : NullOrdering.NULLS_FIRST;
      out.add(Expressions.sort(e, direction, nulls));
    }
    return out.toArray(new SortOrder[0]);
  }

  private static String key(JsonNode field) {
    return field.path("transform").asText() + "@" + field.path("source-id").asInt();
  }

  private static boolean sameSource(JsonNode a, JsonNode b) {
    return a.path("source-id").asInt() == b.path("source-id").asInt();
  }

  private static int timeRank(String t) {
    switch (t) {
      case "hour":
        return 4;
      case "day":
        return 3;
      case "month":
        return 2;
      case "year":
        return 1;
      default:
        return 0;
    }
  }

  /** Java's Transform.satisfiesOrderOf for the transforms whose order they share. */
  private static boolean satisfiesOrderOf(String a, String b) {
    if (a.equals(b)) {
      return true;
    }
    if (a.equals("identity")) {
      return !b.startsWith("bucket[") && !b.equals("void");
    }
    return timeRank(a) > 0 && timeRank(b) > 0 && timeRank(a) > timeRank(b);
  }

  /** A partition or sort field as a Spark expression (null: void or unknown). */
  private static Expression transform(JsonNode field, Map<Integer, String> names) {
    String column = names.get(field.path("source-id").asInt());
    if (column == null) {
      return null;
    }
    String transform = field.path("transform").asText();
    if (transform.equals("identity")) {
      return Expressions.column(column);
    } else if (transform.startsWith("bucket[")) {
      return Expressions.bucket(width(transform), column);
    } else if (transform.startsWith("truncate[")) {
      return Expressions.apply("truncate", Expressions.literal(width(transform)), Expressions.column(column));
    } else if (transform.equals("year")) {
      return Expressions.years(column);
    } else if (transform.equals("month")) {
      return Expressions.months(column);
    } else if (transform.equals("day")) {
      return Expressions.days(column);
    } else if (transform.equals("hour")) {
      return Expressions.hours(column);
    }
    return null;
  }

  private static int width(String transform) {
    return Integer.parseInt(transform.substring(transform.indexOf('[') + 1, transform.indexOf(']')).trim());
  }
}
