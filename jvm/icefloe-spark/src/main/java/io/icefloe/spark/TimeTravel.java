package io.icefloe.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.icefloe.spark.jni.Json;
import io.icefloe.spark.jni.NativeTable;

/** Which snapshot a table object reads: the current one, a snapshot id, a ref, or as of a time. */
final class TimeTravel {
  static final TimeTravel NONE = new TimeTravel(null, null, null);

  private final Long snapshotId;
  private final String ref;
  private final Long asOfMillis;

  private TimeTravel(Long snapshotId, String ref, Long asOfMillis) {
    this.snapshotId = snapshotId;
    this.ref = ref;
    this.asOfMillis = asOfMillis;
  }

  static TimeTravel snapshot(long id) {
    return new TimeTravel(id, null, null);
  }

  static TimeTravel ref(String name) {
    return new TimeTravel(null, name, null);
  }

  static TimeTravel asOf(long millis) {
    return new TimeTravel(null, null, millis);
  }

  void addTo(ObjectNode request) {
    if (snapshotId != null) {
      request.put("snapshot-id", snapshotId);
    }
    if (ref != null) {
      request.put("ref", ref);
    }
    if (asOfMillis != null) {
      request.put("as-of-timestamp", asOfMillis);
    }
  }

  /**
   * The Iceberg schema this table object reads with: the current one, or for time travel the
   * snapshot's (a tag's, a snapshot id's, a time's; a branch reads with the current schema), as
   * Java's {@code SnapshotUtil.schemaFor}.
   */
  JsonNode schema(NativeTable table) {
    if (this == NONE) {
      return table.info().get("schema");
    }
    ObjectNode request = Json.object();
    addTo(request);
    return table.scanSchema(Json.write(request));
  }

  @Override
  public String toString() {
    return snapshotId != null ? "snapshot " + snapshotId
        : ref != null ? "ref " + ref
        : asOfMillis != null ? "as of " + asOfMillis + " ms" : "current";
  }
}
