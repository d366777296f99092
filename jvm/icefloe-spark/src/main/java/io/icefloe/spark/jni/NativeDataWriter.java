package io.icefloe.spark.jni;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The Rust data-file writer of one task ({@code icefloe::write::data_writer::DataFileWriter}):
 * Arrow batches in, through the Arrow C Data Interface, Parquet data files of the table out, and
 * their {@code data_file} rows as Arrow IPC bytes for the driver's commit.
 *
 * <p>The writer API, stable for the connector's writes and row-level commands:
 *
 * <ul>
 *   <li>{@link #open}: the table metadata JSON ({@link NativeTable#metadataJson}), the FileIO
 *       properties of the table location (the table info's {@code io-properties}, null for local
 *       files) and the options JSON: {@code partition-id}, {@code task-id}, {@code
 *       operation-id} (Java's file names {@code %05d-%d-%s-%05d.parquet}), {@code properties}
 *       (overrides of the table's {@code write.*}), {@code data-location}, {@code spec-id}
 *       (default: the default spec) and {@code sort-order-id};
 *   <li>{@link #write(BufferAllocator, VectorSchemaRoot)}: the root's columns are the table's
 *       top-level columns in order (Spark types are converted: timestamps of any zone, strings
 *       for uuids, binary for fixed); rows are partitioned and files roll at {@code
 *       write.target-file-size-bytes};
 *   <li>{@link #finish}: closes the files; the bytes go to {@link NativeCatalog#commitWrite};
 *   <li>{@link #abort}: deletes every file this writer stored;
 *   <li>{@link #close}: frees the native writer (always call it).
 * </ul>
 *
 * Not thread-safe: one task's thread uses it.
 */
public final class NativeDataWriter implements AutoCloseable {
  private long handle;

  private NativeDataWriter(long handle) {
    this.handle = handle;
  }

  public static NativeDataWriter open(String metadataJson, String ioPropertiesJson, String optionsJson) {
    return new NativeDataWriter(Native.dataWriterOpen(metadataJson, ioPropertiesJson, optionsJson));
  }

  private long handle() {
    if (handle == 0) {
      throw new IllegalStateException("the icefloe data writer is closed");
    }
    return handle;
  }

  /**
   * Writes the rows of an exported batch: {@code arrayAddress} and {@code schemaAddress} are an
   * {@code ArrowArray} and {@code ArrowSchema} filled by {@code Data.exportVectorSchemaRoot};
   * Rust takes them over (releases them).
   */
  public void write(long arrayAddress, long schemaAddress) {
    Native.dataWriterWrite(handle(), arrayAddress, schemaAddress);
  }

  /** Writes the rows of {@code root} (exported to Rust; the root stays the caller's). */
  public void write(BufferAllocator allocator, VectorSchemaRoot root) {
    if (root.getRowCount() == 0) {
      return;
    }
    try (ArrowArray array = ArrowArray.allocateNew(allocator);
        ArrowSchema schema = ArrowSchema.allocateNew(allocator)) {
      Data.exportVectorSchemaRoot(allocator, root, null, array, schema);
      write(array.memoryAddress(), schema.memoryAddress());
    }
  }

  /** Closes the open files and returns their data-file rows (Arrow IPC). */
  public byte[] finish() {
    return Native.dataWriterFinish(handle());
  }

  /** Deletes every file this writer stored; returns the ones that could not be deleted. */
  public List<String> abort() {
    List<String> kept = new ArrayList<>();
    for (JsonNode f : Json.parse(Native.dataWriterAbort(handle()))) {
      kept.add(f.asText());
    }
    return kept;
  }

  @Override
  public synchronized void close() {
    if (handle != 0) {
      long h = handle;
      handle = 0;
      Native.dataWriterClose(h);
    }
  }
}
