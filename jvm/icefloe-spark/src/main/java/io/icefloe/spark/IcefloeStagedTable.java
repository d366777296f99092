package io.icefloe.spark;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.icefloe.spark.jni.IcefloeCommitStateUnknownException;
import io.icefloe.spark.jni.NativeCatalog;
import io.icefloe.spark.jni.NativeTable;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;

/**
 * A table being created or replaced (Java's StagedSparkTable over a create or replace
 * transaction): nothing reaches the catalog until {@link #commitStagedChanges}, which commits
 * the new or replacing metadata and the rows of the query written into it ({@code ... AS
 * SELECT}) as one commit (crates/icefloe-jni/src/staged.rs). Executors write the query's data
 * files against the metadata the commit starts from (the replacement's schema and spec, with
 * the ids Java's {@code buildReplacement} keeps or assigns); its write's commit only hands the
 * files to this table.
 */
class IcefloeStagedTable implements StagedTable, SupportsWrite {
  private final String name;
  private final NativeCatalog catalog;
  private final Identifier ident;
  private final NativeTable staged;
  private final ObjectNode request;
  private final StructType schema;
  /** The data files the query's write committed here (null: no query wrote). */
  private byte[][] written = null;
  /** The commit's outcome is unknown: the files may be the table's and must stay. */
  private boolean unknownOutcome = false;

  IcefloeStagedTable(
      String name, NativeCatalog catalog, Identifier ident, NativeTable staged, ObjectNode request) {
    this.name = name;
    this.catalog = catalog;
    this.ident = ident;
    this.staged = staged;
    this.request = request;
    this.schema = SparkTypes.schema(staged.info().get("schema"));
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  @SuppressWarnings("deprecation")
  public StructType schema() {
    return schema;
  }

  @Override
  public Transform[] partitioning() {
    return Partitioning.toSpark(staged.info().get("spec"), staged.info().get("schema"));
  }

  @Override
  public Map<String, String> properties() {
    Map<String, String> out = new LinkedHashMap<>();
    staged.info().path("properties").fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
    return out;
  }

  @Override
  public Set<TableCapability> capabilities() {
    // Spark 4.1 writes a replacement's query as an overwrite of the staged table (truncate)
    return EnumSet.of(
        TableCapability.BATCH_WRITE,
        TableCapability.TRUNCATE,
        TableCapability.OVERWRITE_BY_FILTER,
        TableCapability.OVERWRITE_DYNAMIC);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    return new IcefloeWriteBuilder(catalog, ident, staged, info, this);
  }

  /** The write's commit: its files wait for {@link #commitStagedChanges}. */
  synchronized void written(
      byte[][] files, ObjectNode snapshotProperties, String operation, com.fasterxml.jackson.databind.JsonNode filter) {
    this.written = files;
    request.set("snapshot-properties", snapshotProperties);
    request.put("operation", operation);
    if (filter != null) {
      request.set("filter", filter);
    }
  }

  @Override
  public synchronized void commitStagedChanges() {
    request.put("write", written != null);
    if (!request.has("snapshot-properties")) {
      ObjectNode summary = request.putObject("snapshot-properties");
      summary.put("spark.app.id", SparkSession.active().sparkContext().applicationId());
    }
    try {
      catalog.commitStaged(request, written == null ? new byte[0][] : written);
    } catch (IcefloeCommitStateUnknownException e) {
      unknownOutcome = true;
      throw e;
    }
  }

  /**
   * The query or the commit failed: the catalog is as it was. The query's files are deleted
   * (a failed commit has deleted them already, except when its outcome is unknown: then they
   * may be the table's, and stay).
   */
  @Override
  public synchronized void abortStagedChanges() {
    if (written != null && !unknownOutcome) {
      catalog.deleteWrittenFiles(staged, written);
    }
    written = null;
  }

  @Override
  public String toString() {
    return "icefloe staged " + name;
  }
}
