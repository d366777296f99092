package io.icefloe.spark;

import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Makes the executors' readers. It carries the table location and the FileIO properties the
 * driver's catalog gives for it (credentials included: never printed), so an executor opens
 * the data files without a catalog.
 */
class IcefloeReaderFactory implements PartitionReaderFactory {
  private static final long serialVersionUID = 1L;
  private final String location;
  private final String ioPropertiesJson;
  private final String schemaJson;
  private final int limit;
  private final String metadataColumnsJson;

  IcefloeReaderFactory(String location, String ioPropertiesJson, String schemaJson, int limit) {
    this(location, ioPropertiesJson, schemaJson, limit, null);
  }

  /** {@code metadataColumnsJson}: a JSON list of metadata columns read after the data, or null. */
  IcefloeReaderFactory(
      String location, String ioPropertiesJson, String schemaJson, int limit, String metadataColumnsJson) {
    this.location = location;
    this.ioPropertiesJson = ioPropertiesJson;
    this.schemaJson = schemaJson;
    this.limit = limit;
    this.metadataColumnsJson = metadataColumnsJson;
  }

  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return true;
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    throw new UnsupportedOperationException("icefloe reads columnar batches only");
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    IcefloeBatchReader reader =
        new IcefloeBatchReader(
            ((IcefloeInputPartition) partition).payload(),
            location,
            ioPropertiesJson,
            schemaJson,
            limit,
            metadataColumnsJson);
    TaskContext context = TaskContext.get();
    if (context != null) {
      // a cancelled or failed task closes its reader too (the native stream and its files)
      context.addTaskCompletionListener(
          (org.apache.spark.util.TaskCompletionListener) ctx -> reader.close());
    }
    return reader;
  }

  @Override
  public String toString() {
    return "IcefloeReaderFactory(" + location + ")";
  }
}
