package io.icefloe.spark.jni;

import com.fasterxml.jackson.databind.JsonNode;

/** A packed plan: its task groups' payloads, read out once and then closed. */
public final class NativePlan implements AutoCloseable {
  private long handle;

  NativePlan(long handle) {
    this.handle = handle;
  }

  /** {@code snapshot-id}, {@code schema} (the projected Iceberg schema), {@code groups}, {@code tasks}. */
  public JsonNode info() {
    return Json.parse(Native.planInfo(handle));
  }

  /** Task group {@code group}'s payload (an LZ4 frame of its Arrow IPC stream). */
  public byte[] payload(int group) {
    return Native.planPayload(handle, group);
  }

  /**
   * A row-level write's scan: its planned data files with the deletes applied to each, for the
   * write's executors (so they read no manifest); null for other scans and for plans too large
   * to hand on.
   */
  public byte[] scannedDeletes() {
    return Native.planScannedDeletes(handle);
  }

  @Override
  public void close() {
    if (handle != 0) {
      Native.planClose(handle);
      handle = 0;
    }
  }
}
