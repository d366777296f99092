package io.icefloe.spark.jni;

/**
 * The native methods of crates/icefloe-jni. Requests and answers are JSON strings; what
 * lives across calls is a handle that exactly one {@link NativeCatalog}, {@link NativeTable}
 * or {@link NativePlan} owns and frees. Errors of the Rust core arrive as {@link
 * IcefloeException} and its subclasses, with the core error's message.
 */
final class Native {
  static {
    NativeLoader.load();
  }

  private Native() {}

  static native long catalogOpen(String name, String propertiesJson);

  static native void catalogClose(long catalog);

  static native String catalogCall(long catalog, String requestJson);

  static native long tableLoad(long catalog, String identJson);

  static native void tableClose(long table);

  static native String tableInfo(long table);

  static native boolean filterBinds(long table, String filterJson, boolean caseSensitive);

  static native long planOpen(long table, String requestJson);

  static native String planInfo(long plan);

  static native byte[] planPayload(long plan, int group);

  static native byte[] planScannedDeletes(long plan);

  static native void planClose(long plan);

  static native long planCount(long table, String requestJson);

  static native String scanSchema(long table, String requestJson);

  static native String metadataColumns(long table, String requestJson);

  static native boolean scanFilterBinds(long table, String requestJson);

  static native boolean filterSelectsWholeFiles(long table, String requestJson);

  static native String planAggregate(long table, String requestJson);

  static native void readerOpen(
      byte[] payload, String location, String ioPropertiesJson, String schemaJson, long streamAddress);

  static native void readerOpenWithMetadata(
      byte[] payload,
      String location,
      String ioPropertiesJson,
      String schemaJson,
      String metadataColumnsJson,
      long streamAddress);

  // counters of the executor-side reading (crates/icefloe-jni/src/stats.rs)

  static native String readerStats();

  static native void resetPeakAllocated();

  // row-level SQL (crates/icefloe-jni/src/rowlevel.rs)

  static native boolean deletesWholeFiles(long table, String filterJson);

  static native String deleteWhere(long catalog, String requestJson);

  static native byte[] writeDeletes(String requestJson, long[] positions, byte[] scanned);

  static native String rowDeltaCommit(long catalog, String requestJson, byte[] written);

  static native void rowDeltaAbort(long catalog, String requestJson, byte[] written);

  // --- writes (crates/icefloe-jni/src/write.rs) ---

  static native String tableMetadataJson(long table);

  static native long dataWriterOpen(String metadataJson, String ioPropertiesJson, String optionsJson);

  static native void dataWriterWrite(long writer, long arrayAddress, long schemaAddress);

  static native byte[] dataWriterFinish(long writer);

  static native String dataWriterAbort(long writer);

  static native void dataWriterClose(long writer);

  static native String tableCommit(long catalog, String requestJson, byte[][] dataFiles);

  static native String dataFilesDelete(long catalog, long table, byte[][] dataFiles);

  static native String tableCreate(long catalog, String requestJson);

  static native String tableAlter(long catalog, String requestJson);

  static native long tableStage(long catalog, String requestJson);

  static native String tableCommitStaged(long catalog, String requestJson, byte[][] dataFiles);
}
