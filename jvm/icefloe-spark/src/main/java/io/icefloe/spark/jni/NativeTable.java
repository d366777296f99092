package io.icefloe.spark.jni;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.ref.Cleaner;

/**
 * A table as the catalog loaded it (its metadata pinned: every scan of this object plans the
 * same metadata file). Spark's Table objects have no close, so the native table is freed
 * when this object is garbage (a {@link Cleaner}).
 */
public final class NativeTable {
  private static final Cleaner CLEANER = Cleaner.create();

  private final long handle;
  private final JsonNode info;

  NativeTable(long handle) {
    this.handle = handle;
    CLEANER.register(this, () -> Native.tableClose(handle));
    this.info = Json.parse(Native.tableInfo(handle));
  }

  /**
   * {@code metadata-location}, {@code location}, {@code format-version}, {@code
   * current-snapshot-id}, {@code properties}, {@code schema} (Iceberg JSON) and {@code
   * io-properties} (credentials included: never print it).
   */
  public JsonNode info() {
    return info;
  }

  /** Whether the filter (the expression JSON form) binds to the current schema. */
  public boolean filterBinds(String filterJson, boolean caseSensitive) {
    try {
      return Native.filterBinds(handle, filterJson, caseSensitive);
    } finally {
      java.lang.ref.Reference.reachabilityFence(this);
    }
  }

  /** Plans a scan (see crates/icefloe-jni/src/plan.rs for the request). */
  public NativePlan plan(String requestJson) {
    try {
      return new NativePlan(Native.planOpen(handle, requestJson));
    } finally {
      java.lang.ref.Reference.reachabilityFence(this);
    }
  }

  /**
   * The metadata columns a scan of the request (its snapshot selection) can read: a JSON list
   * of Iceberg fields, in Java's order (crates/icefloe-jni/src/metadata_columns.rs).
   */
  public JsonNode metadataColumns(String requestJson) {
    try {
      return Json.parse(Native.metadataColumns(handle, requestJson));
    } finally {
      java.lang.ref.Reference.reachabilityFence(this);
    }
  }

  /** The scan's row count from the files' record counts, or -1 when they do not give it. */
  public long countFromMetadata(String requestJson) {
    try {
      return Native.planCount(handle, requestJson);
    } finally {
      java.lang.ref.Reference.reachabilityFence(this);
    }
  }

  /** The table metadata JSON (what executors open a {@link NativeDataWriter} or write delete files with). */
  public String metadataJson() {
    try {
      return Native.tableMetadataJson(handle);
    } finally {
      java.lang.ref.Reference.reachabilityFence(this);
    }
  }

  /**
   * Whether deleting the rows matching the filter (expression JSON) removes whole data files
   * only (Java's canDeleteUsingMetadata).
   */
  public boolean deletesWholeFiles(String filterJson) {
    try {
      return Native.deletesWholeFiles(handle, filterJson);
    } finally {
      java.lang.ref.Reference.reachabilityFence(this);
    }
  }

  long handle() {
    return handle;
  }

  /**
   * The schema (Iceberg JSON) a scan of the request reads with: the snapshot's for time travel
   * to a snapshot id, a time or a tag, else the current one.
   */
  public JsonNode scanSchema(String requestJson) {
    try {
      return Json.parse(Native.scanSchema(handle, requestJson));
    } finally {
      java.lang.ref.Reference.reachabilityFence(this);
    }
  }

  /** Whether the request's filter binds to the schema its scan reads with. */
  public boolean filterBinds(String requestJson) {
    try {
      return Native.scanFilterBinds(handle, requestJson);
    } finally {
      java.lang.ref.Reference.reachabilityFence(this);
    }
  }

  /**
   * Whether the request's filter selects whole files (every planned task's residual is true and
   * no partition value is null): every row read passes it.
   */
  public boolean filterSelectsWholeFiles(String requestJson) {
    try {
      return Native.filterSelectsWholeFiles(handle, requestJson);
    } finally {
      java.lang.ref.Reference.reachabilityFence(this);
    }
  }

  /**
   * The request's aggregates from the files' metadata ({@code values} and {@code types}), or a
   * JSON null when the rows must be read (see crates/icefloe-jni/src/aggregate.rs).
   */
  public JsonNode aggregate(String requestJson) {
    try {
      return Json.parse(Native.planAggregate(handle, requestJson));
    } finally {
      java.lang.ref.Reference.reachabilityFence(this);
    }
  }
}
