package io.icefloe.spark;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.icefloe.spark.jni.Json;
import io.icefloe.spark.jni.NativeDeletes;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DeltaWriter;
import org.apache.spark.sql.connector.write.DeltaWriterFactory;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * Makes the executors' writers of a merge-on-read operation. It carries the table metadata
 * JSON, the scanned snapshot and the FileIO properties (credentials included: never printed), so
 * an executor writes delete files without a catalog.
 */
class IcefloeDeltaWriterFactory implements DeltaWriterFactory {
  private static final long serialVersionUID = 1L;
  private final String metadataJson;
  private final long snapshotId;
  private final String ioPropertiesJson;
  private final String queryId;

  IcefloeDeltaWriterFactory(
      String metadataJson, long snapshotId, String ioPropertiesJson, String queryId) {
    this.metadataJson = metadataJson;
    this.snapshotId = snapshotId;
    this.ioPropertiesJson = ioPropertiesJson;
    this.queryId = queryId;
  }

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

    Writer(int partitionId, long taskId) {
      this.partitionId = partitionId;
      this.taskId = taskId;
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
      throw new UnsupportedOperationException(
          "icefloe's Spark catalog cannot write new rows yet (UPDATE and MERGE INTO inserts need"
              + " the connector's data-file writer); DELETE FROM and MERGE INTO ... DELETE work");
    }

    @Override
    public void write(InternalRow row) {
      insert(row);
    }

    @Override
    public WriterCommitMessage commit() {
      if (deletes.isEmpty()) {
        return new Written(new byte[0]);
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
      return new Written(NativeDeletes.write(Json.write(request), flat));
    }

    @Override
    public void abort() {
      // nothing is written before commit()
      deletes.clear();
    }

    @Override
    public void close() {}
  }
}
