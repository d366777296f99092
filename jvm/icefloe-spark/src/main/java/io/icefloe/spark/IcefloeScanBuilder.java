package io.icefloe.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.icefloe.spark.jni.Json;
import io.icefloe.spark.jni.NativeTable;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownAggregates;
import org.apache.spark.sql.connector.read.SupportsPushDownLimit;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsPushDownV2Filters;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Builds a scan: the columns Spark needs (nested struct fields too), the predicates icefloe's
 * planning can prune with, a limit, and aggregates from the files' metadata ({@link
 * MetadataAggregates}).
 */
class IcefloeScanBuilder
    implements ScanBuilder,
        SupportsPushDownRequiredColumns,
        SupportsPushDownV2Filters,
        SupportsPushDownLimit,
        SupportsPushDownAggregates {
  private final String name;
  private final NativeTable table;
  private final TimeTravel travel;
  /** The Iceberg schema the scan reads with (the snapshot's for time travel). */
  private final JsonNode icebergSchema;
  private final StructType tableSchema;
  private final CaseInsensitiveStringMap options;
  private final boolean caseSensitive;
  private StructType required = null;
  private JsonNode filter = null;
  private final List<Predicate> pushed = new ArrayList<>();
  private int limit = -1;
  private Aggregation aggregation = null;
  private AggregateScan aggregateScan = null;
  private boolean aggregatePushed = false;
  // metadata columns Spark asked for (the row ids of a row-level operation's scan)
  private final List<String> metadataColumns = new ArrayList<>();
  private IcefloeScan built = null;
  private boolean treePositions = false;

  IcefloeScanBuilder(
      String name,
      NativeTable table,
      TimeTravel travel,
      StructType tableSchema,
      CaseInsensitiveStringMap options) {
    this.name = name;
    this.table = table;
    this.travel = travel;
    this.icebergSchema = travel.schema(table);
    this.tableSchema = tableSchema;
    this.options = options;
    this.caseSensitive = SQLConf.get().caseSensitiveAnalysis();
  }

  @Override
  public void pruneColumns(StructType requiredSchema) {
    List<StructField> data = new ArrayList<>();
    metadataColumns.clear();
    for (StructField f : requiredSchema.fields()) {
      if (MetadataColumns.isMetadataColumn(f.name()) && find(tableSchema, f.name()) == null) {
        metadataColumns.add(f.name());
      } else {
        data.add(f);
      }
    }
    this.required = new StructType(data.toArray(new StructField[0]));
  }

  /** The scan {@link #build} made last (a row-level operation validates from its snapshot). */
  IcefloeScan builtScan() {
    return built;
  }

  /**
   * Makes the scan keep where a v4 table's data files sit in its metadata tree, for a
   * row-level write's commit (which then reads those leaf entries instead of searching).
   */
  void keepTreePositions() {
    treePositions = true;
  }

  /** The filter pushed into planning (the expression JSON form), or null. */
  JsonNode pushedFilter() {
    return filter;
  }

  /**
   * Predicates with a safe translation (see {@link Filters}) prune files. Spark evaluates every
   * predicate again after the scan, except those translated completely when the pushed filter
   * selects whole files (every planned task's residual is true and no partition value is null):
   * then every row read passes them, as with Java's predicates that select whole partitions, and
   * Spark may push aggregates and limits below them.
   */
  @Override
  public Predicate[] pushPredicates(Predicate[] predicates) {
    List<Predicate> complete = new ArrayList<>();
    for (Predicate p : predicates) {
      JsonNode translated = Filters.translate(p, icebergSchema);
      if (translated == null || (translated.isBoolean() && translated.asBoolean())) {
        continue;
      }
      ObjectNode check = request();
      check.set("filter", translated);
      if (!table.filterBinds(Json.write(check))) {
        continue;
      }
      pushed.add(p);
      if (Filters.complete(p, icebergSchema)) {
        complete.add(p);
      }
      filter = filter == null ? translated : Filters.binary("and", filter, translated);
    }
    if (complete.isEmpty() || !table.filterSelectsWholeFiles(Json.write(request()))) {
      return predicates;
    }
    List<Predicate> postScan = new ArrayList<>();
    for (Predicate p : predicates) {
      if (!complete.contains(p)) {
        postScan.add(p);
      }
    }
    return postScan.toArray(new Predicate[0]);
  }

  @Override
  public Predicate[] pushedPredicates() {
    return pushed.toArray(new Predicate[0]);
  }

  /** Each partition stops reading once it has this many rows; Spark still applies the limit. */
  @Override
  public boolean pushLimit(int n) {
    this.limit = n;
    return true;
  }

  /** Aggregates answered from metadata are complete: one row, nothing for Spark to merge. */
  @Override
  public boolean supportCompletePushDown(Aggregation aggregation) {
    return aggregateScan(aggregation) != null;
  }

  @Override
  public boolean pushAggregation(Aggregation aggregation) {
    aggregatePushed = aggregateScan(aggregation) != null;
    return aggregatePushed;
  }

  private AggregateScan aggregateScan(Aggregation aggregation) {
    if (!metadataColumns.isEmpty()) {
      // a row-level operation's scan reads the rows with their ids
      return null;
    }
    if (this.aggregation != aggregation) {
      this.aggregation = aggregation;
      this.aggregateScan = MetadataAggregates.scan(name, table, request(), aggregation);
    }
    return aggregateScan;
  }

  ObjectNode request() {
    ObjectNode request = Json.object();
    travel.addTo(request);
    request.put("case-sensitive", caseSensitive);
    if (treePositions) {
      request.put("positions", true);
    }
    if (filter != null) {
      request.set("filter", filter);
    }
    if (required != null) {
      ArrayNode selected = request.putArray("selected");
      selectedNames(required, tableSchema, "", selected);
    }
    String splitSize = options.get("split-size");
    if (splitSize != null) {
      request.put("target-split-size", Long.parseLong(splitSize));
    } else {
      // the session's switch wins over the table's read.split.adaptive-size.enabled, as in
      // Java's SparkReadConf; unset, Rust reads the table property
      String enabled = SQLConf.get().getConfString(ADAPTIVE_ENABLED, null);
      boolean on = enabled == null || Boolean.parseBoolean(enabled.trim());
      if (enabled != null) {
        request.put("adaptive-split-size", on);
      }
      int parallelism = on ? splitParallelism() : 0;
      if (parallelism > 0) {
        request.put("parallelism", parallelism);
      }
    }
    return request;
  }

  private static final String ADAPTIVE_ENABLED =
      "spark.sql.iceberg.read.adaptive-split-size.enabled";
  private static final String ADAPTIVE_PARALLELISM =
      "spark.sql.iceberg.read.adaptive-split-size.parallelism";

  /**
   * The slots a scan's split size adapts to (Java's adaptive split size, applied in Rust):
   * the session's spark.sql.iceberg.read.adaptive-split-size.parallelism, else the larger of
   * Spark's default parallelism and its shuffle partitions, as Java's SparkReadConf; 0 when
   * there is no active context.
   */
  private static int splitParallelism() {
    SQLConf conf = SQLConf.get();
    String given = conf.getConfString(ADAPTIVE_PARALLELISM, null);
    if (given != null) {
      int parallelism;
      try {
        parallelism = Integer.parseInt(given.trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            ADAPTIVE_PARALLELISM + " must be a whole number > 0: " + given, e);
      }
      if (parallelism <= 0) {
        throw new IllegalArgumentException(ADAPTIVE_PARALLELISM + " must be > 0: " + given);
      }
      return parallelism;
    }
    int defaultParallelism;
    try {
      defaultParallelism = SparkSession.active().sparkContext().defaultParallelism();
    } catch (RuntimeException e) {
      return 0;
    }
    return Math.max(defaultParallelism, conf.numShufflePartitions());
  }

  /**
   * The full names of the required columns: struct fields down to the leaves Spark asks for
   * (nested pruning); a list or map whole (icefloe's select keeps them whole, as Java's).
   */
  private static void selectedNames(
      StructType required, StructType table, String parent, ArrayNode out) {
    for (StructField field : required.fields()) {
      String path = parent.isEmpty() ? field.name() : parent + "." + field.name();
      DataType type = field.dataType();
      StructField full = find(table, field.name());
      if (type instanceof StructType
          && full != null
          && full.dataType() instanceof StructType
          && ((StructType) type).fields().length > 0
          && !type.equals(full.dataType())) {
        selectedNames((StructType) type, (StructType) full.dataType(), path, out);
      } else {
        out.add(path);
      }
    }
  }

  private static StructField find(StructType struct, String name) {
    for (StructField f : struct.fields()) {
      if (f.name().equals(name)) {
        return f;
      }
    }
    for (StructField f : struct.fields()) {
      if (f.name().equalsIgnoreCase(name)) {
        return f;
      }
    }
    return null;
  }

  @Override
  public Scan build() {
    if (aggregatePushed) {
      return aggregateScan;
    }
    built = new IcefloeScan(name, table, request(), pushed, limit, metadataColumns);
    return built;
  }
}
