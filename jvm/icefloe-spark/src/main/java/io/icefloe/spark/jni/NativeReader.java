package io.icefloe.spark.jni;

/** The Rust reader of one task group, exported as an Arrow C stream. */
public final class NativeReader {
  private NativeReader() {}

  /**
   * Starts reading a task group's payload into the ArrowArrayStream at {@code streamAddress}
   * (allocated by the caller; released by importing it and closing the import). The FileIO is
   * made for {@code location} from {@code ioPropertiesJson} (null for local files); {@code
   * schemaJson} is the projected Iceberg schema whose Spark types the batches are given.
   */
  public static void open(
      byte[] payload, String location, String ioPropertiesJson, String schemaJson, long streamAddress) {
    Native.readerOpen(payload, location, ioPropertiesJson, schemaJson, streamAddress);
  }

  /** {@link #open} with metadata columns ({@code _file}, {@code _pos}: a JSON list) after the data. */
  public static void openWithMetadata(
      byte[] payload,
      String location,
      String ioPropertiesJson,
      String schemaJson,
      String metadataColumnsJson,
      long streamAddress) {
    Native.readerOpenWithMetadata(
        payload, location, ioPropertiesJson, schemaJson, metadataColumnsJson, streamAddress);
  }

  /**
   * The reading counters of this JVM, a JSON object: {@code open-readers}, {@code
   * reading-threads}, {@code batches}, {@code rows}, {@code allocated-bytes} (the native
   * library's live allocations) and {@code peak-allocated-bytes}. For tests of cancellation
   * and memory: a killed task's reader must be closed and its threads gone.
   */
  public static String stats() {
    return Native.readerStats();
  }

  /** Starts a new peak of {@code peak-allocated-bytes} at the bytes allocated now. */
  public static void resetPeakAllocated() {
    Native.resetPeakAllocated();
  }
}
