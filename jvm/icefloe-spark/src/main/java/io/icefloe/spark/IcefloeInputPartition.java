package io.icefloe.spark;

import org.apache.spark.sql.connector.read.InputPartition;

/** One task group: its payload (an LZ4 frame of the group's Arrow IPC plan rows). */
class IcefloeInputPartition implements InputPartition {
  private static final long serialVersionUID = 1L;
  private final byte[] payload;

  IcefloeInputPartition(byte[] payload) {
    this.payload = payload;
  }

  byte[] payload() {
    return payload;
  }

  @Override
  public String toString() {
    return "IcefloeInputPartition(" + payload.length + " bytes)";
  }
}
