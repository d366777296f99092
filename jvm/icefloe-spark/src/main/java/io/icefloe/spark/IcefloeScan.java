package io.icefloe.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.icefloe.spark.jni.Json;
import io.icefloe.spark.jni.NativePlan;
import io.icefloe.spark.jni.NativeTable;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.SupportsReportStatistics;
import org.apache.spark.sql.connector.read.SupportsRuntimeV2Filtering;
import org.apache.spark.sql.types.StructType;

/**
 * A planned scan: planning runs once, in Rust (the core's planner and packer), when Spark
 * first asks for the schema or the partitions; each task group becomes one input partition
 * carrying its payload bytes. A runtime filter (dynamic partition pruning, on the partition
 * source columns read) plans again with it added.
 */
class IcefloeScan implements Scan, Batch, SupportsRuntimeV2Filtering, SupportsReportStatistics {
  private final String name;
  private final NativeTable table;
  private ObjectNode request;
  private final List<Predicate> pushed;
  private final List<Predicate> runtime = new ArrayList<>();
  private JsonNode readIcebergSchema;
  private int[] partitionSourceIds;
  private final int limit;
  private final List<String> metadataColumns;
  private Long snapshotId;
  private StructType readSchema;
  private String readSchemaJson;
  private IcefloeInputPartition[] partitions;
  private long estimatedRows;
  private JsonNode treePositions;
  private byte[] scannedDeletes;

  IcefloeScan(String name, NativeTable table, ObjectNode request, List<Predicate> pushed, int limit) {
    this(name, table, request, pushed, limit, List.of());
  }

  /** A scan that also reads the given metadata columns ({@code _file}, {@code _pos}), last. */
  IcefloeScan(
      String name,
      NativeTable table,
      ObjectNode request,
      List<Predicate> pushed,
      int limit,
      List<String> metadataColumns) {
    this.name = name;
    this.table = table;
    this.request = request;
    this.pushed = pushed;
    this.limit = limit;
    this.metadataColumns = List.copyOf(metadataColumns);
  }

  /**
   * Where the planned data files sit in a v4 table's metadata tree (JSON, as the native plan
   * gives them), when the scan was asked to keep them; null otherwise.
   */
  JsonNode treePositions() {
    plan();
    return treePositions;
  }

  /**
   * A row-level write's scan (one asked to keep tree positions): its planned data files with the
   * deletes applied to each, which the write's executors are handed so that they read no
   * manifest; null otherwise or for a plan too large to hand on.
   */
  byte[] scannedDeletes() {
    plan();
    return scannedDeletes;
  }

  /** The snapshot the scan read (null for a table without snapshots). */
  Long snapshotId() {
    plan();
    return snapshotId;
  }

  private synchronized void plan() {
    if (partitions != null) {
      return;
    }
    try (NativePlan plan = table.plan(Json.write(request))) {
      JsonNode info = plan.info();
      readSchema = SparkTypes.schema(info.get("schema"));
      if (!metadataColumns.isEmpty()) {
        readSchema =
            MetadataColumns.of(table.metadataColumns(Json.write(request))).append(readSchema, metadataColumns);
      }
      readIcebergSchema = info.get("schema");
      readSchemaJson = Json.write(readIcebergSchema);
      JsonNode sid = info.get("snapshot-id");
      snapshotId = sid == null || sid.isNull() ? null : sid.asLong();
      JsonNode sources = info.get("partition-source-ids");
      partitionSourceIds = new int[sources.size()];
      for (int i = 0; i < sources.size(); i++) {
        partitionSourceIds[i] = sources.get(i).asInt();
      }
      estimatedRows = info.get("estimated-rows").asLong();
      treePositions = info.get("positions");
      scannedDeletes = plan.scannedDeletes();
      int groups = info.get("groups").asInt();
      IcefloeInputPartition[] out = new IcefloeInputPartition[groups];
      for (int g = 0; g < groups; g++) {
        out[g] = new IcefloeInputPartition(plan.payload(g));
      }
      partitions = out;
    }
  }

  @Override
  public StructType readSchema() {
    plan();
    return readSchema;
  }

  /**
   * Java's statistics (SparkScan.estimateStatistics): the row estimate Rust makes with Java's
   * rule (the snapshot summary's total for an unfiltered partitioned table, else the tasks'
   * estimates) and, as SparkSchemaUtil.estimateSize, that many rows of the read schema's
   * default size. Without them Spark takes a DSv2 scan as too large to broadcast in a join.
   */
  @Override
  public Statistics estimateStatistics() {
    plan();
    long rows = estimatedRows;
    long size;
    if (rows == Long.MAX_VALUE) {
      size = rows;
    } else {
      try {
        size = Math.multiplyExact((long) readSchema.defaultSize(), rows);
      } catch (ArithmeticException e) {
        size = Long.MAX_VALUE;
      }
    }
    long sizeInBytes = size;
    return new Statistics() {
      @Override
      public OptionalLong sizeInBytes() {
        return OptionalLong.of(sizeInBytes);
      }

      @Override
      public OptionalLong numRows() {
        return OptionalLong.of(rows);
      }
    };
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public InputPartition[] planInputPartitions() {
    plan();
    return partitions;
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    plan();
    JsonNode info = table.info();
    JsonNode io = info.get("io-properties");
    return new IcefloeReaderFactory(
        info.get("location").asText(),
        io == null || io.isNull() ? null : Json.write(io),
        readSchemaJson,
        limit,
        metadataColumns.isEmpty() ? null : Json.write(metadataColumns));
  }

  /**
   * The partition source columns the scan reads (only those: Spark matches the attributes with
   * a join's keys in the scan's output), as Java's SparkBatchQueryScan.
   */
  @Override
  public NamedReference[] filterAttributes() {
    plan();
    Set<Integer> ids = new HashSet<>();
    for (int id : partitionSourceIds) {
      ids.add(id);
    }
    List<NamedReference> out = new ArrayList<>();
    collectSources(readIcebergSchema.get("fields"), new ArrayList<>(), ids, out);
    return out.toArray(new NamedReference[0]);
  }

  private static void collectSources(
      JsonNode fields, List<String> parent, Set<Integer> ids, List<NamedReference> out) {
    for (JsonNode f : fields) {
      List<String> path = new ArrayList<>(parent);
      path.add(f.get("name").asText());
      JsonNode type = f.get("type");
      if (ids.contains(f.get("id").asInt())) {
        out.add(Expressions.column(path.stream().map(IcefloeScan::quoted).collect(Collectors.joining("."))));
      } else if (type.isObject() && "struct".equals(type.path("type").asText())) {
        collectSources(type.get("fields"), path, ids, out);
      }
    }
  }

  private static String quoted(String part) {
    return "`" + part.replace("`", "``") + "`";
  }

  /**
   * A runtime filter (the values of a join's other side): the translatable predicates are
   * added to the scan's filter and the scan is planned again, so partitions without matching
   * values are not read. Spark still evaluates the join, so the translation's usual rules
   * (keep every row Spark keeps) suffice.
   */
  @Override
  public synchronized void filter(Predicate[] predicates) {
    plan();
    JsonNode added = null;
    for (Predicate p : predicates) {
      JsonNode translated = Filters.translate(p, readIcebergSchema);
      if (translated == null || (translated.isBoolean() && translated.asBoolean())) {
        continue;
      }
      ObjectNode check = request.deepCopy();
      check.set("filter", translated);
      if (!table.filterBinds(Json.write(check))) {
        continue;
      }
      runtime.add(p);
      added = added == null ? translated : Filters.binary("and", added, translated);
    }
    if (added == null) {
      return;
    }
    ObjectNode filtered = request.deepCopy();
    JsonNode current = request.get("filter");
    filtered.set(
        "filter", current == null || current.isNull() ? added : Filters.binary("and", current, added));
    request = filtered;
    partitions = null;
    plan();
  }

  @Override
  public String description() {
    String filters = pushed.stream().map(Predicate::toString).collect(Collectors.joining(", "));
    if (!runtime.isEmpty()) {
      filters += (filters.isEmpty() ? "" : ", ") + "runtime: "
          + runtime.stream().map(Predicate::toString).collect(Collectors.joining(", "));
    }
    return "icefloe " + name + " [filters=" + filters + (limit >= 0 ? ", limit=" + limit : "")
        + ", columns=" + (request.has("selected") ? request.get("selected").toString() : "*")
        + (metadataColumns.isEmpty() ? "" : ", metadata=" + metadataColumns) + "]";
  }
}
