package io.icefloe.spark;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.icefloe.spark.jni.Json;
import io.icefloe.spark.jni.NativeDataWriter;
import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;

/**
 * One task's writer: Spark's rows are put into Arrow vectors by Spark's own ArrowWriter, and
 * every {@link #BATCH_ROWS} rows the batch is exported through the Arrow C Data Interface to the
 * Rust data-file writer ({@link NativeDataWriter}), which partitions, encodes and stores them.
 * The task's result is the data-file rows (Arrow IPC) of the files it wrote.
 */
class IcefloeDataWriter implements DataWriter<InternalRow> {
  static final int BATCH_ROWS = 4096;

  /** The data files one task wrote (Arrow IPC bytes of their data-file rows). */
  static final class Message implements WriterCommitMessage {
    private static final long serialVersionUID = 1L;
    final byte[] dataFiles;

    Message(byte[] dataFiles) {
      this.dataFiles = dataFiles;
    }
  }

  static final class Factory implements DataWriterFactory {
    private static final long serialVersionUID = 1L;
    private final String metadataJson;
    private final String ioPropertiesJson;
    private final String operationId;
    private final StructType schema;
    private final String zone;

    Factory(String metadataJson, String ioPropertiesJson, String operationId, StructType schema, String zone) {
      this.metadataJson = metadataJson;
      this.ioPropertiesJson = ioPropertiesJson;
      this.operationId = operationId;
      this.schema = schema;
      this.zone = zone;
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
      ObjectNode options = Json.object();
      options.put("partition-id", partitionId);
      options.put("task-id", taskId);
      options.put("operation-id", operationId);
      NativeDataWriter writer =
          NativeDataWriter.open(metadataJson, ioPropertiesJson, Json.write(options));
      return new IcefloeDataWriter(writer, schema, zone);
    }
  }

  private final NativeDataWriter writer;
  private final BufferAllocator allocator;
  private final VectorSchemaRoot root;
  private final ArrowWriter arrow;
  private int rows = 0;
  private boolean closed = false;

  IcefloeDataWriter(NativeDataWriter writer, StructType schema, String zone) {
    this.writer = writer;
    this.allocator = new RootAllocator();
    this.root =
        VectorSchemaRoot.create(ArrowUtils.toArrowSchema(schema, zone, false, false), allocator);
    this.arrow = ArrowWriter.create(root);
  }

  @Override
  public void write(InternalRow row) throws IOException {
    arrow.write(row);
    rows++;
    if (rows >= BATCH_ROWS) {
      flush();
    }
  }

  private void flush() {
    if (rows == 0) {
      return;
    }
    arrow.finish();
    writer.write(allocator, root);
    arrow.reset();
    rows = 0;
  }

  @Override
  public WriterCommitMessage commit() throws IOException {
    flush();
    return new Message(writer.finish());
  }

  @Override
  public void abort() throws IOException {
    writer.abort();
  }

  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    try {
      writer.close();
    } finally {
      root.close();
      allocator.close();
    }
  }
}
