package io.icefloe.spark.jni;

/** Executor side of a row-level write: the delete files for one task's row positions. */
public final class NativeDeletes {
  private NativeDeletes() {}

  /**
   * Writes deletion vectors (v3) or position delete files (v2) for the positions of each data
   * file ({@code files} in the request: {@code [path, count]} in the order of {@code
   * positions}); returns the written files' records, which only the driver's commit reads.
   */
  public static byte[] write(String requestJson, long[] positions) {
    return Native.writeDeletes(requestJson, positions);
  }
}
