package io.icefloe.spark.jni;

/** Executor side of a row-level write: the delete files for one task's row positions. */
public final class NativeDeletes {
  private NativeDeletes() {}

  /**
   * Writes deletion vectors (v3) or position delete files (v2) for the positions of each data
   * file ({@code files} in the request: {@code [path, count]} in the order of {@code
   * positions}); returns the written files' records, which only the driver's commit reads.
   * {@code scanned}: the scan's planned files and their deletes ({@link
   * NativePlan#scannedDeletes}), or null, and then the snapshot's manifests are read.
   */
  public static byte[] write(String requestJson, long[] positions, byte[] scanned) {
    return Native.writeDeletes(requestJson, positions, scanned);
  }
}
