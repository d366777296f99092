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
}
