package io.icefloe.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.icefloe.spark.jni.Json;
import io.icefloe.spark.jni.NativePlan;
import io.icefloe.spark.jni.NativeTable;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.types.StructType;

/**
 * A planned scan: planning runs once, in Rust (the core's planner and packer), when Spark
 * first asks for the schema or the partitions; each task group becomes one input partition
 * carrying its payload bytes.
 */
class IcefloeScan implements Scan, Batch {
  private final String name;
  private final NativeTable table;
  private final ObjectNode request;
  private final List<Predicate> pushed;
  private final int limit;
  private final List<String> metadataColumns;
  private Long snapshotId;
  private StructType readSchema;
  private String readSchemaJson;
  private IcefloeInputPartition[] partitions;

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
      readSchema = MetadataColumns.append(SparkTypes.schema(info.get("schema")), metadataColumns);
      JsonNode sid = info.get("snapshot-id");
      snapshotId = sid == null || sid.isNull() ? null : sid.asLong();
      readSchemaJson = Json.write(info.get("schema"));
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

  @Override
  public String description() {
    String filters = pushed.stream().map(Predicate::toString).collect(Collectors.joining(", "));
    return "icefloe " + name + " [filters=" + filters + (limit >= 0 ? ", limit=" + limit : "")
        + ", columns=" + (request.has("selected") ? request.get("selected").toString() : "*")
        + (metadataColumns.isEmpty() ? "" : ", metadata=" + metadataColumns) + "]";
  }
}
