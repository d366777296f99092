package io.icefloe.spark;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.icefloe.spark.jni.Json;
import io.icefloe.spark.jni.NativeDataWriter;
import io.icefloe.spark.jni.NativeDeletes;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.connector.write.DeltaWriter;
import org.apache.spark.sql.connector.write.DeltaWriterFactory;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Makes the executors' writers of a merge-on-read operation. It carries the table metadata
 * JSON, the scanned snapshot, what the scan planned (each data file's spec, partition and
 * deletes: the executors read no manifest to find a data file's DV) and the FileIO properties
 * (credentials included: never printed), so an executor writes delete files without a catalog.
 */
class IcefloeDeltaWriterFactory implements DeltaWriterFactory {
  private static final long serialVersionUID = 1L;
  private final String metadataJson;
  private final long snapshotId;
  // the scan's planned files and their deletes (crates/icefloe/src/write/scanned_deletes.rs);
  // null for a plan too large to hand on, whose writers read the manifests
  private final byte[] scannedDeletes;
  private final String ioPropertiesJson;
  private final String queryId;
  // the rows an UPDATE or MERGE inserts: the table's columns
  private final StructType rowSchema;
  private final String zone;
  // v3: the data files carry _row_id and _last_updated_sequence_number after the row's columns
  // (null for inserted rows; an updated row's own _row_id), as Java's; the indexes of those
  // fields in the metadata rows reinsert gets (-1: absent)
  private final boolean rowLineage;
  private final int rowIdIndex;
  private final int sequenceIndex;

  IcefloeDeltaWriterFactory(
      String metadataJson,
      long snapshotId,
      byte[] scannedDeletes,
      String ioPropertiesJson,
      String queryId,
      StructType rowSchema,
      String zone,
      boolean rowLineage,
      int rowIdIndex,
      int sequenceIndex) {
    this.metadataJson = metadataJson;
    this.snapshotId = snapshotId;
    this.scannedDeletes = scannedDeletes;
    this.ioPropertiesJson = ioPropertiesJson;
    this.queryId = queryId;
    this.rowSchema = rowSchema;
    this.zone = zone;
    this.rowLineage = rowLineage;
    this.rowIdIndex = rowIdIndex;
    this.sequenceIndex = sequenceIndex;
  }

  // the kind of a record of data files (crates/icefloe-jni/src/rowlevel.rs)
  private static final byte ADDED_DATA = 2;

  @Override
  public DeltaWriter<InternalRow> createWriter(int partitionId, long taskId) {
    return new Writer(partitionId, taskId);
  }

  @Override
  public String toString() {
    return "IcefloeDeltaWriterFactory(snapshot " + snapshotId + ")";
  }

  /** What a task wrote: records only the driver's commit reads (crates/icefloe-jni rowlevel.rs). */
  static final class Written implements WriterCommitMessage {
    private static final long serialVersionUID = 1L;
    private final byte[] bytes;

    Written(byte[] bytes) {
      this.bytes = bytes;
    }

    byte[] bytes() {
      return bytes;
    }
  }

  /** The deleted positions of each data file, in arrival order. */
  private static final class Positions {
    long[] values = new long[16];
    int size = 0;

    void add(long pos) {
      if (size == values.length) {
        values = Arrays.copyOf(values, values.length * 2);
      }
      values[size++] = pos;
    }
  }

  private final class Writer implements DeltaWriter<InternalRow> {
    private final int partitionId;
    private final long taskId;
    private final Map<String, Positions> deletes = new LinkedHashMap<>();
    // the inserted rows' writer, opened on the first insert: Spark's ArrowWriter fills the
    // vectors, every BATCH_ROWS rows they go to the Rust data-file writer (as INSERT's)
    private NativeDataWriter data = null;
    private BufferAllocator allocator = null;
    private VectorSchemaRoot root = null;
    private ArrowWriter arrow = null;
    private int buffered = 0;

    Writer(int partitionId, long taskId) {
      this.partitionId = partitionId;
      this.taskId = taskId;
    }

    private void openData() {
      ObjectNode options = Json.object();
      options.put("partition-id", partitionId);
      options.put("task-id", taskId);
      options.put("operation-id", queryId);
      StructType written = rowSchema;
      if (rowLineage) {
        options.put("row-lineage", true);
        written =
            written
                .add(MetadataColumns.ROW_ID, org.apache.spark.sql.types.DataTypes.LongType, true)
                .add(MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER, org.apache.spark.sql.types.DataTypes.LongType, true);
      }
      data = NativeDataWriter.open(metadataJson, ioPropertiesJson, Json.write(options));
      allocator = new RootAllocator();
      root = VectorSchemaRoot.create(ArrowUtils.toArrowSchema(written, zone, false, false), allocator);
      arrow = ArrowWriter.create(root);
    }

    private void flush() {
      if (buffered == 0) {
        return;
      }
      arrow.finish();
      data.write(allocator, root);
      arrow.reset();
      buffered = 0;
    }

    @Override
    public void delete(InternalRow metadata, InternalRow id) {
      // the row id is (_file, _pos), in rowId()'s order
      // (a UTF8String; read as an Object, so the connector needs no spark-unsafe at build time)
      String file = String.valueOf(id.get(0, org.apache.spark.sql.types.DataTypes.StringType));
      deletes.computeIfAbsent(file, f -> new Positions()).add(id.getLong(1));
    }

    @Override
    public void update(InternalRow metadata, InternalRow id, InternalRow row) {
      throw new UnsupportedOperationException("icefloe receives updates as a delete and an insert");
    }

    @Override
    public void insert(InternalRow row) {
      add(row, null);
    }

    /** An updated row, with the metadata Spark read it with: it keeps its {@code _row_id}. */
    @Override
    public void reinsert(InternalRow metadata, InternalRow row) {
      add(row, metadata);
    }

    private void add(InternalRow row, InternalRow metadata) {
      if (data == null) {
        openData();
      }
      if (rowLineage) {
        // a new row has no lineage (nulls: the commit gives it a row id, the file's sequence
        // number its last-updated one); an updated row keeps its row id, and Spark has nulled
        // its last-updated sequence number (not preserved on reinsert)
        Object[] lineage = new Object[2];
        if (metadata != null && rowIdIndex >= 0 && !metadata.isNullAt(rowIdIndex)) {
          lineage[0] = metadata.getLong(rowIdIndex);
        }
        if (metadata != null && sequenceIndex >= 0 && !metadata.isNullAt(sequenceIndex)) {
          lineage[1] = metadata.getLong(sequenceIndex);
        }
        row = new JoinedRow(row, new GenericInternalRow(lineage));
      }
      arrow.write(row);
      buffered++;
      if (buffered >= IcefloeDataWriter.BATCH_ROWS) {
        flush();
      }
    }

    @Override
    public void write(InternalRow row) {
      insert(row);
    }


    @Override
    public WriterCommitMessage commit() {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[] written = writeDeletes();
      out.write(written, 0, written.length);
      if (data != null) {
        flush();
        byte[] files = data.finish();
        ByteBuffer header = ByteBuffer.allocate(13).order(ByteOrder.LITTLE_ENDIAN);
        header.put(ADDED_DATA).putInt(-1).putLong(files.length);
        out.write(header.array(), 0, 13);
        out.write(files, 0, files.length);
      }
      return new Written(out.toByteArray());
    }

    private byte[] writeDeletes() {
      if (deletes.isEmpty()) {
        return new byte[0];
      }
      ObjectNode request = Json.object();
      request.put("metadata", metadataJson);
      request.put("snapshot-id", snapshotId);
      if (ioPropertiesJson != null) {
        request.set("io-properties", Json.parse(ioPropertiesJson));
      }
      // Java's file names: partition id, task id, operation id
      request.put("prefix", String.format("%05d-%d-%s", partitionId, taskId, queryId));
      ArrayNode files = request.putArray("files");
      int total = 0;
      for (Map.Entry<String, Positions> e : deletes.entrySet()) {
        files.addArray().add(e.getKey()).add(e.getValue().size);
        total += e.getValue().size;
      }
      long[] flat = new long[total];
      int at = 0;
      for (Positions p : deletes.values()) {
        System.arraycopy(p.values, 0, flat, at, p.size);
        at += p.size;
      }
      deletes.clear();
      return NativeDeletes.write(Json.write(request), flat, scannedDeletes);
    }

    @Override
    public void abort() {
      // delete files are written at commit() only; data files as the rows come
      deletes.clear();
      if (data != null) {
        data.abort();
      }
    }

    @Override
    public void close() {
      if (data == null) {
        return;
      }
      try {
        data.close();
      } finally {
        root.close();
        allocator.close();
        data = null;
      }
    }
  }
}
