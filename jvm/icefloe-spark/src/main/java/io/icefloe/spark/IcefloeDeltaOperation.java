package io.icefloe.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.icefloe.spark.jni.Json;
import io.icefloe.spark.jni.NativeTable;
import java.io.ByteArrayOutputStream;
import java.util.Locale;
import org.apache.spark.sql.connector.distributions.Distribution;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.DeltaBatchWrite;
import org.apache.spark.sql.connector.write.DeltaWrite;
import org.apache.spark.sql.connector.write.DeltaWriteBuilder;
import org.apache.spark.sql.connector.write.DeltaWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.RequiresDistributionAndOrdering;
import org.apache.spark.sql.connector.write.RowLevelOperationInfo;
import org.apache.spark.sql.connector.write.SupportsDelta;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A merge-on-read {@code DELETE}, {@code UPDATE} or {@code MERGE INTO} (Spark's SupportsDelta),
 * as Java Iceberg's SparkPositionDeltaOperation: the scan reads the rows with their row ids
 * ({@code _file}, {@code _pos}); Spark hands each deleted row's id to a writer; each task writes
 * the delete files of its data files (deletion vectors in v3, merged with the live ones;
 * position delete files in v2) in Rust; the driver commits one row delta validated from the
 * scanned snapshot (isolation level from {@code write.<command>.isolation-level}, serializable
 * by default). Spark distributes and orders the rows as Java's position-delta writes ask
 * ({@link WriteRequirements#positionDelta}): by default deletes clustered by {@code _spec_id} and
 * {@code _partition} (so each data file gets its deletes from one task), inserted rows by the
 * table's partition transforms. Where a mode lets a data file's deletes reach two tasks ({@code
 * none}), the commit merges its new deletion vectors, as Java's.
 */
class IcefloeDeltaOperation implements SupportsDelta {
  private final IcefloeTable table;
  private final RowLevelOperationInfo info;
  private IcefloeScanBuilder scanBuilder;

  IcefloeDeltaOperation(IcefloeTable table, RowLevelOperationInfo info) {
    this.table = table;
    this.info = info;
  }

  @Override
  public Command command() {
    return info.command();
  }

  @Override
  public String description() {
    return "icefloe merge-on-read " + command() + " on " + table.name();
  }

  @Override
  public synchronized ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    scanBuilder = (IcefloeScanBuilder) table.newScanBuilder(options);
    scanBuilder.keepTreePositions();
    return scanBuilder;
  }

  @Override
  public NamedReference[] rowId() {
    return new NamedReference[] {
      Expressions.column(MetadataColumns.FILE), Expressions.column(MetadataColumns.POS)
    };
  }

  /** v3 row lineage: whether the table's rows have row ids to keep. */
  private boolean rowLineage() {
    return table.nativeTable().info().path("format-version").asInt() >= 3;
  }

  /**
   * The scan reads each row's {@code _spec_id} and {@code _partition}, which the write's
   * distribution clusters the deletes by, and in v3 its {@code _row_id} and {@code
   * _last_updated_sequence_number} (Java's requiredMetadataAttributes): Spark hands an updated
   * row's metadata to {@code reinsert}, which writes its row id into the new data file.
   */
  @Override
  public NamedReference[] requiredMetadataAttributes() {
    NamedReference specId = Expressions.column("_spec_id");
    NamedReference partition = Expressions.column("_partition");
    if (!rowLineage()) {
      return new NamedReference[] {specId, partition};
    }
    return new NamedReference[] {
      specId,
      partition,
      Expressions.column(MetadataColumns.ROW_ID),
      Expressions.column(MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER)
    };
  }

  /** An update arrives as a delete and an insert, as in Java Iceberg. */
  @Override
  public boolean representUpdateAsDeleteAndInsert() {
    return true;
  }

  @Override
  public DeltaWriteBuilder newWriteBuilder(LogicalWriteInfo writeInfo) {
    return new DeltaWriteBuilder() {
      @Override
      public DeltaWrite build() {
        return new Write(writeInfo);
      }
    };
  }

  private String isolationLevel() {
    String key =
        "write." + command().toString().toLowerCase(Locale.ROOT) + ".isolation-level";
    JsonNode level = table.nativeTable().info().path("properties").get(key);
    return level == null ? "serializable" : level.asText();
  }

  private final class Write implements DeltaWrite, DeltaBatchWrite, RequiresDistributionAndOrdering {
    private final LogicalWriteInfo writeInfo;
    private final WriteRequirements requirements;

    Write(LogicalWriteInfo writeInfo) {
      this.writeInfo = writeInfo;
      this.requirements =
          WriteRequirements.positionDelta(table.nativeTable().info(), writeInfo.options(), command());
    }

    @Override
    public String description() {
      return IcefloeDeltaOperation.this.description();
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
    public DeltaBatchWrite toBatch() {
      return this;
    }

    private Long scannedSnapshot() {
      IcefloeScan scan = scanBuilder == null ? null : scanBuilder.builtScan();
      // no scan: Spark replaced it with an empty relation, nothing was read
      return scan == null ? null : scan.snapshotId();
    }

    @Override
    public DeltaWriterFactory createBatchWriterFactory(PhysicalWriteInfo physical) {
      NativeTable t = table.nativeTable();
      JsonNode io = t.info().get("io-properties");
      Long snapshot = scannedSnapshot();
      IcefloeScan scan = scanBuilder == null ? null : scanBuilder.builtScan();
      // where an updated row's lineage is in the metadata Spark hands to reinsert (-1: none)
      int rowIdIndex = -1;
      int sequenceIndex = -1;
      if (rowLineage() && writeInfo.metadataSchema().isPresent()) {
        org.apache.spark.sql.types.StructField[] meta = writeInfo.metadataSchema().get().fields();
        for (int i = 0; i < meta.length; i++) {
          if (meta[i].name().equals(MetadataColumns.ROW_ID)) {
            rowIdIndex = i;
          } else if (meta[i].name().equals(MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER)) {
            sequenceIndex = i;
          }
        }
      }
      return new IcefloeDeltaWriterFactory(
          t.metadataJson(),
          snapshot == null ? -1L : snapshot,
          scan == null ? null : scan.scannedDeletes(),
          io == null || io.isNull() ? null : Json.write(io),
          writeInfo.queryId(),
          writeInfo.schema(),
          org.apache.spark.sql.internal.SQLConf.get().sessionLocalTimeZone(),
          rowLineage(),
          rowIdIndex,
          sequenceIndex);
    }

    private byte[] joined(WriterCommitMessage[] messages) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      for (WriterCommitMessage m : messages) {
        if (m instanceof IcefloeDeltaWriterFactory.Written) {
          byte[] bytes = ((IcefloeDeltaWriterFactory.Written) m).bytes();
          out.write(bytes, 0, bytes.length);
        }
      }
      return out.toByteArray();
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {
      ObjectNode request = table.commitRequest();
      Long snapshot = scannedSnapshot();
      if (snapshot != null) {
        request.put("snapshot-id", snapshot);
      }
      request.put("isolation-level", isolationLevel());
      IcefloeScan scan = scanBuilder == null ? null : scanBuilder.builtScan();
      JsonNode positions = scan == null ? null : scan.treePositions();
      if (positions != null && positions.size() > 0) {
        request.set("positions", positions);
      }
      JsonNode filter = scanBuilder == null ? null : scanBuilder.pushedFilter();
      if (filter != null) {
        request.set("conflict-filter", filter);
      }
      table.catalog().commitRowDelta(Json.write(request), joined(messages));
    }

    @Override
    public void abort(WriterCommitMessage[] messages) {
      if (messages == null) {
        return;
      }
      table.catalog().abortRowDelta(Json.write(table.commitRequest()), joined(messages));
    }
  }

  @Override
  public String toString() {
    return description();
  }
}
