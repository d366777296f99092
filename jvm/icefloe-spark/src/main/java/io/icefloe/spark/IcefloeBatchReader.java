package io.icefloe.spark;

import io.icefloe.spark.jni.NativeReader;
import java.io.IOException;
import java.util.List;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Reads one task group through the Rust reader: the batches arrive through the Arrow C Data
 * Interface (an ArrowArrayStream exported by Rust, imported here), zero-copy, as
 * ArrowColumnVectors. Closing releases the stream, which drops the Rust reader and its files.
 */
class IcefloeBatchReader implements PartitionReader<ColumnarBatch> {
  private final BufferAllocator allocator;
  private final ArrowArrayStream stream;
  private final ArrowReader reader;
  private final int limit;
  private long rows = 0;
  private ColumnarBatch current = null;
  private boolean closed = false;

  IcefloeBatchReader(
      byte[] payload,
      String location,
      String ioPropertiesJson,
      String schemaJson,
      int limit,
      String metadataColumnsJson) {
    this.limit = limit;
    this.allocator = new RootAllocator();
    ArrowArrayStream s = null;
    ArrowReader r = null;
    try {
      s = ArrowArrayStream.allocateNew(allocator);
      if (metadataColumnsJson == null) {
        NativeReader.open(payload, location, ioPropertiesJson, schemaJson, s.memoryAddress());
      } else {
        NativeReader.openWithMetadata(
            payload, location, ioPropertiesJson, schemaJson, metadataColumnsJson, s.memoryAddress());
      }
      r = Data.importArrayStream(allocator, s);
    } catch (RuntimeException | Error e) {
      if (s != null) {
        s.close();
      }
      allocator.close();
      throw e;
    }
    this.stream = s;
    this.reader = r;
  }

  @Override
  public synchronized boolean next() throws IOException {
    if (closed || (limit >= 0 && rows >= limit)) {
      return false;
    }
    if (!reader.loadNextBatch()) {
      return false;
    }
    VectorSchemaRoot root = reader.getVectorSchemaRoot();
    List<FieldVector> vectors = root.getFieldVectors();
    ColumnVector[] columns = new ColumnVector[vectors.size()];
    for (int i = 0; i < columns.length; i++) {
      columns[i] = new BorrowedVector(vectors.get(i));
    }
    current = new ColumnarBatch(columns, root.getRowCount());
    rows += root.getRowCount();
    return true;
  }

  /**
   * A column of the reader's current batch. Spark may close a batch it is done with, and
   * closing an ArrowColumnVector closes its vector (a struct vector drops its children then);
   * the vectors belong to the import's root, reloaded for each batch and closed with the
   * reader, so closing a column does nothing.
   */
  private static final class BorrowedVector extends ArrowColumnVector {
    /**
     * No value of this batch's column is null. Spark's generated code asks isNullAt for every
     * value of a nullable column, and ArrowColumnVector answers through the vector's validity
     * bitmap (a call per value on the vector, with Arrow's bounds checks): in a profile of
     * all five columns of a 10,000,000-row table into the noop sink, that was about a third of
     * the task threads' time (docs/benchmarks.md). Counting the nulls once per batch answers
     * the common case without touching the bitmap.
     */
    private final boolean noNulls;

    /**
     * Without nulls, the values of the common fixed-width columns and of strings are read from
     * the buffers' addresses (as Spark's own OffHeapColumnVector does): ArrowColumnVector goes
     * through the vector's get, which checks the validity bit of every value
     * (arrow.enable_null_check_for_get) and the buffer's bounds. 0 when not used.
     */
    private final long values;

    private final long offsets;

    /** What {@link #values} holds: one of the constants below, NONE when not used. */
    private final int kind;

    private static final int NONE = 0;
    private static final int LONG = 1;
    private static final int DOUBLE = 2;
    private static final int INT = 3;
    private static final int FLOAT = 4;
    private static final int STRING = 5;

    BorrowedVector(FieldVector vector) {
      super(vector);
      this.noNulls = vector.getNullCount() == 0;
      int k = NONE;
      if (noNulls && vector.getValueCount() > 0) {
        if (vector instanceof BigIntVector
            || vector instanceof TimeStampMicroTZVector
            || vector instanceof TimeStampMicroVector) {
          k = LONG;
        } else if (vector instanceof Float8Vector) {
          k = DOUBLE;
        } else if (vector instanceof IntVector || vector instanceof DateDayVector) {
          k = INT;
        } else if (vector instanceof Float4Vector) {
          k = FLOAT;
        } else if (vector instanceof VarCharVector) {
          k = STRING;
        }
      }
      this.kind = k;
      this.values = k == NONE ? 0 : vector.getDataBufferAddress();
      this.offsets = k == STRING ? vector.getOffsetBufferAddress() : 0;
    }

    @Override
    public boolean isNullAt(int rowId) {
      return !noNulls && super.isNullAt(rowId);
    }

    @Override
    public long getLong(int rowId) {
      return kind == LONG ? Platform.getLong(null, values + 8L * rowId) : super.getLong(rowId);
    }

    @Override
    public double getDouble(int rowId) {
      return kind == DOUBLE ? Platform.getDouble(null, values + 8L * rowId) : super.getDouble(rowId);
    }

    @Override
    public int getInt(int rowId) {
      return kind == INT ? Platform.getInt(null, values + 4L * rowId) : super.getInt(rowId);
    }

    @Override
    public float getFloat(int rowId) {
      return kind == FLOAT ? Platform.getFloat(null, values + 4L * rowId) : super.getFloat(rowId);
    }

    @Override
    public UTF8String getUTF8String(int rowId) {
      if (kind != STRING) {
        return super.getUTF8String(rowId);
      }
      int start = Platform.getInt(null, offsets + 4L * rowId);
      int end = Platform.getInt(null, offsets + 4L * rowId + 4);
      return UTF8String.fromAddress(null, values + start, end - start);
    }

    @Override
    public void close() {}
  }

  @Override
  public ColumnarBatch get() {
    return current;
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    current = null;
    try {
      reader.close();
    } catch (IOException e) {
      // the stream's release has run; nothing else holds native memory
    } finally {
      stream.close();
      allocator.close();
    }
  }
}
