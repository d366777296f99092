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

  @Override
  public void close() {
    if (handle != 0) {
      Native.planClose(handle);
      handle = 0;
    }
  }
}
