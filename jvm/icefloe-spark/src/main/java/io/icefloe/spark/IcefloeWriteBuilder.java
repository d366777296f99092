package io.icefloe.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.icefloe.spark.jni.Json;
import io.icefloe.spark.jni.NativeCatalog;
import io.icefloe.spark.jni.NativeTable;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsDynamicOverwrite;
import org.apache.spark.sql.connector.write.SupportsOverwriteV2;
import org.apache.spark.sql.connector.distributions.Distribution;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.write.RequiresDistributionAndOrdering;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;

/**
 * Batch writes into an icefloe table, with Java Iceberg's SparkWriteBuilder semantics: an append
 * ({@code INSERT INTO}, {@code writeTo().append()}), an overwrite by filter ({@code INSERT
 * OVERWRITE} with static partition values; {@code truncate} is the always-true filter, the
 * static overwrite of a whole table) or a dynamic overwrite replacing the partitions the new rows
 * fall in ({@code spark.sql.sources.partitionOverwriteMode=dynamic}, {@code
 * overwritePartitions()}).
 *
 * <p>Executors write Parquet data files in Rust ({@link IcefloeDataWriter}); the driver commits
 * their data files with icefloe's Rust transaction, which deletes them when the commit fails.
 * {@code abort} deletes the files of the tasks that succeeded.
 */
class IcefloeWriteBuilder implements WriteBuilder, SupportsOverwriteV2, SupportsDynamicOverwrite {
  private final NativeCatalog catalog;
  private final Identifier ident;
  private final NativeTable table;
  private final LogicalWriteInfo info;
  /** A staged create or replace the write's files go to, instead of a commit of their own. */
  private final IcefloeStagedTable staged;
  private String operation = "append";
  private JsonNode filter = null;

  IcefloeWriteBuilder(NativeCatalog catalog, Identifier ident, NativeTable table, LogicalWriteInfo info) {
    this(catalog, ident, table, info, null);
  }

  IcefloeWriteBuilder(
      NativeCatalog catalog, Identifier ident, NativeTable table, LogicalWriteInfo info, IcefloeStagedTable staged) {
    this.catalog = catalog;
    this.ident = ident;
    this.table = table;
    this.info = info;
    this.staged = staged;
  }

  @Override
  public WriteBuilder overwriteDynamicPartitions() {
    if ("overwrite".equals(operation)) {
      throw new IllegalArgumentException("Cannot use dynamic overwrite after overwrite by filter");
    }
    operation = "replace-partitions";
    return this;
  }

  @Override
  public boolean canOverwrite(Predicate[] predicates) {
    return translate(predicates) != null;
  }

  @Override
  public WriteBuilder overwrite(Predicate[] predicates) {
    if ("replace-partitions".equals(operation)) {
      throw new IllegalArgumentException("Cannot overwrite by filter after dynamic overwrite");
    }
    JsonNode f = translate(predicates);
    if (f == null) {
      throw new IllegalArgumentException(
          "Cannot overwrite: the filter does not translate to an icefloe expression");
    }
    operation = "overwrite";
    filter = f;
    return this;
  }

  /** The conjunction of the predicates, or null when one does not translate. */
  private JsonNode translate(Predicate[] predicates) {
    JsonNode schema = table.info().get("schema");
    JsonNode out = null;
    for (Predicate p : predicates) {
      JsonNode t = Filters.translate(p, schema);
      if (t == null) {
        return null;
      }
      out = out == null ? t : Filters.binary("and", out, t);
    }
    return out == null ? com.fasterxml.jackson.databind.node.BooleanNode.TRUE : out;
  }

  @Override
  public Write build() {
    StructType schema = info.schema();
    String zone = SQLConf.get().sessionLocalTimeZone();
    String operationId = info.queryId() != null ? info.queryId() : UUID.randomUUID().toString();
    // Java's SparkWrite asks Spark to cluster (or order) the rows by partition
    WriteRequirements requirements = WriteRequirements.of(table.info(), info.options());
    return new RequiresDistributionAndOrdering() {
      @Override
      public String description() {
        return "icefloe " + operation + " into " + ident;
      }

      @Override
      public Distribution requiredDistribution() {
        return requirements.distribution;
      }

      @Override
      public boolean distributionStrictlyRequired() {
        return false; // as Java's: Spark may split and coalesce the clusters by size
      }

      @Override
      public SortOrder[] requiredOrdering() {
        return requirements.ordering;
      }

      @Override
      public long advisoryPartitionSizeInBytes() {
        return requirements.advisoryPartitionSize;
      }

      @Override
      public BatchWrite toBatch() {
        return new IcefloeBatchWrite(
            catalog, ident, table, operation, filter, schema, zone, operationId, staged);
      }
    };
  }
}

class IcefloeBatchWrite implements BatchWrite {
  private final NativeCatalog catalog;
  private final Identifier ident;
  private final NativeTable table;
  private final String operation;
  private final JsonNode filter;
  private final StructType schema;
  private final String zone;
  private final String operationId;
  private final IcefloeStagedTable staged;

  IcefloeBatchWrite(
      NativeCatalog catalog,
      Identifier ident,
      NativeTable table,
      String operation,
      JsonNode filter,
      StructType schema,
      String zone,
      String operationId,
      IcefloeStagedTable staged) {
    this.catalog = catalog;
    this.ident = ident;
    this.table = table;
    this.operation = operation;
    this.filter = filter;
    this.schema = schema;
    this.zone = zone;
    this.operationId = operationId;
    this.staged = staged;
  }

  @Override
  public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo physical) {
    JsonNode io = table.info().get("io-properties");
    String ioJson = io == null || io.isNull() ? null : Json.write(io);
    return new IcefloeDataWriter.Factory(table.metadataJson(), ioJson, operationId, schema, zone);
  }

  @Override
  public boolean useCommitCoordinator() {
    return true;
  }

  private static byte[][] files(WriterCommitMessage[] messages) {
    List<byte[]> out = new ArrayList<>();
    for (WriterCommitMessage m : messages) {
      if (m instanceof IcefloeDataWriter.Message) {
        out.add(((IcefloeDataWriter.Message) m).dataFiles);
      }
    }
    return out.toArray(new byte[0][]);
  }

  @Override
  public void commit(WriterCommitMessage[] messages) {
    ObjectNode request = Json.object();
    ObjectNode summary = request.putObject("snapshot-properties");
    summary.put("icefloe.write-id", operationId);
    String appId = SQLConf.get().getConfString("spark.app.id", null);
    if (appId != null) {
      summary.put("spark.app.id", appId);
    }
    if (staged != null) {
      // committed with the staged create or replace (commitStagedChanges)
      staged.written(files(messages), summary, operation, filter);
      return;
    }
    for (String level : ident.namespace()) {
      request.withArray("namespace").add(level);
    }
    request.put("name", ident.name());
    request.put("operation", operation);
    if (filter != null) {
      request.set("filter", filter);
    }
    catalog.commitWrite(request, files(messages));
  }

  @Override
  public void abort(WriterCommitMessage[] messages) {
    catalog.deleteWrittenFiles(table, files(messages));
  }
}
