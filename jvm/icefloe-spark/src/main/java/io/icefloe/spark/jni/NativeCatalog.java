package io.icefloe.spark.jni;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An icefloe catalog opened by the Rust core ({@code icefloe::catalog::load::load_catalog}),
 * from the properties {@code icefloe.load_catalog} takes (type, uri, warehouse, s3.*, ...).
 * Thread-safe: the Rust catalog is.
 */
public final class NativeCatalog implements AutoCloseable {
  private long handle;

  private NativeCatalog(long handle) {
    this.handle = handle;
  }

  public static NativeCatalog open(String name, Map<String, String> properties) {
    return new NativeCatalog(Native.catalogOpen(name, Json.write(properties)));
  }

  synchronized long handle() {
    if (handle == 0) {
      throw new IllegalStateException("the icefloe catalog is closed");
    }
    return handle;
  }

  private JsonNode call(String op, String[] namespace, ObjectNode extra) {
    ObjectNode request = extra == null ? Json.object() : extra;
    request.put("op", op);
    ArrayNode ns = request.putArray("namespace");
    for (String level : namespace) {
      ns.add(level);
    }
    return Json.parse(Native.catalogCall(handle(), Json.write(request)));
  }

  public List<String[]> listNamespaces(String[] parent) {
    List<String[]> out = new ArrayList<>();
    for (JsonNode ns : call("list-namespaces", parent, null)) {
      String[] levels = new String[ns.size()];
      for (int i = 0; i < levels.length; i++) {
        levels[i] = ns.get(i).asText();
      }
      out.add(levels);
    }
    return out;
  }

  public boolean namespaceExists(String[] namespace) {
    return call("namespace-exists", namespace, null).asBoolean();
  }

  public Map<String, String> namespaceProperties(String[] namespace) {
    Map<String, String> out = new LinkedHashMap<>();
    call("namespace-properties", namespace, null)
        .fields()
        .forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
    return out;
  }

  public void createNamespace(String[] namespace, Map<String, String> properties) {
    ObjectNode request = Json.object();
    ObjectNode props = request.putObject("properties");
    properties.forEach(props::put);
    call("create-namespace", namespace, request);
  }

  public void updateNamespaceProperties(
      String[] namespace, Map<String, String> set, List<String> remove) {
    ObjectNode request = Json.object();
    ObjectNode props = request.putObject("set");
    set.forEach(props::put);
    ArrayNode removed = request.putArray("remove");
    remove.forEach(removed::add);
    call("update-namespace-properties", namespace, request);
  }

  public void dropNamespace(String[] namespace) {
    call("drop-namespace", namespace, null);
  }

  public List<String> listTables(String[] namespace) {
    List<String> out = new ArrayList<>();
    call("list-tables", namespace, null).forEach(n -> out.add(n.asText()));
    return out;
  }

  public boolean tableExists(String[] namespace, String name) {
    ObjectNode request = Json.object();
    request.put("name", name);
    return call("table-exists", namespace, request).asBoolean();
  }

  public void dropTable(String[] namespace, String name) {
    ObjectNode request = Json.object();
    request.put("name", name);
    call("drop-table", namespace, request);
  }

  public void renameTable(String[] namespace, String name, String[] toNamespace, String toName) {
    ObjectNode request = Json.object();
    request.put("name", name);
    ObjectNode to = request.putObject("to");
    ArrayNode ns = to.putArray("namespace");
    for (String level : toNamespace) {
      ns.add(level);
    }
    to.put("name", toName);
    call("rename-table", namespace, request);
  }

  public NativeTable loadTable(String[] namespace, String name) {
    ObjectNode ident = Json.object();
    ArrayNode ns = ident.putArray("namespace");
    for (String level : namespace) {
      ns.add(level);
    }
    ident.put("name", name);
    return new NativeTable(Native.tableLoad(handle(), Json.write(ident)));
  }

  /** Removes the data files all of whose rows match a filter (crates/icefloe-jni/src/rowlevel.rs). */
  public JsonNode deleteWhere(String requestJson) {
    return Json.parse(Native.deleteWhere(handle(), requestJson));
  }

  /** Commits a row-level write's files (the tasks' records, concatenated) as one row delta. */
  public JsonNode commitRowDelta(String requestJson, byte[] written) {
    return Json.parse(Native.rowDeltaCommit(handle(), requestJson, written));
  }

  /** Deletes the files of a row-level write that will not be committed. */
  public void abortRowDelta(String requestJson, byte[] written) {
    Native.rowDeltaAbort(handle(), requestJson, written);
  }

  /**
   * Commits the data files executors wrote (each element the bytes of one {@link
   * NativeDataWriter#finish}) as one snapshot of the table. Request: {@code namespace}, {@code
   * name}, {@code operation} ({@code append}, {@code overwrite} with {@code filter}, the
   * expression JSON form, or {@code replace-partitions}), {@code snapshot-properties}, {@code
   * isolation-level} and {@code base-snapshot-id}. The files are deleted when the commit fails
   * (unless its outcome is unknown). Returns {@code metadata-location} and {@code snapshot-id}.
   */
  public JsonNode commitWrite(ObjectNode request, byte[][] dataFiles) {
    return Json.parse(Native.tableCommit(handle(), Json.write(request), dataFiles));
  }

  /**
   * Deletes the data files named in writers' results (a write given up before its commit);
   * returns the files that could not be deleted.
   */
  public List<String> deleteWrittenFiles(NativeTable table, byte[][] dataFiles) {
    try {
      List<String> kept = new ArrayList<>();
      for (JsonNode f : Json.parse(Native.dataFilesDelete(handle(), table.handle(), dataFiles))) {
        kept.add(f.asText());
      }
      return kept;
    } finally {
      java.lang.ref.Reference.reachabilityFence(table);
    }
  }

  /** DROP TABLE ... PURGE: drops the table and deletes its files inside its location. */
  public void purgeTable(String[] namespace, String name) {
    ObjectNode request = Json.object();
    request.put("name", name);
    call("purge-table", namespace, request);
  }

  /**
   * Creates or replaces a table (crates/icefloe-jni/src/ddl.rs for the request: {@code schema},
   * {@code partitioning}, {@code location}, {@code properties}, {@code mode}).
   */
  public JsonNode createTable(ObjectNode request) {
    return Json.parse(Native.tableCreate(handle(), Json.write(request)));
  }

  /**
   * The metadata a staged create or replace starts from (crates/icefloe-jni/src/staged.rs; the
   * request of {@link #createTable}): a table nothing commits, what the query's data files are
   * written against. Fails with {@link IcefloeAlreadyExistsException} for a create of an
   * existing table, {@link IcefloeNoSuchTableException} for a replace of a missing one.
   */
  public NativeTable stageTable(ObjectNode request) {
    return new NativeTable(Native.tableStage(handle(), Json.write(request)));
  }

  /**
   * Commits a staged create or replace, with the data files executors wrote appended in the
   * same commit when the request has {@code "write": true}; the files are deleted when the
   * commit fails (unless its outcome is unknown).
   */
  public JsonNode commitStaged(ObjectNode request, byte[][] dataFiles) {
    return Json.parse(Native.tableCommitStaged(handle(), Json.write(request), dataFiles));
  }

  /** Alters a table in one commit (crates/icefloe-jni/src/ddl.rs for the changes). */
  public JsonNode alterTable(String[] namespace, String name, ArrayNode changes) {
    ObjectNode request = Json.object();
    ArrayNode ns = request.putArray("namespace");
    for (String level : namespace) {
      ns.add(level);
    }
    request.put("name", name);
    request.set("changes", changes);
    return Json.parse(Native.tableAlter(handle(), Json.write(request)));
  }

  @Override
  public synchronized void close() {
    if (handle != 0) {
      Native.catalogClose(handle);
      handle = 0;
    }
  }
}
