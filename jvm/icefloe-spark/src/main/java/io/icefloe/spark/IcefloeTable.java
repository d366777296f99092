package io.icefloe.spark;

import com.fasterxml.jackson.databind.JsonNode;
import io.icefloe.spark.jni.Json;
import io.icefloe.spark.jni.NativeCatalog;
import io.icefloe.spark.jni.NativeTable;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.MetadataColumn;
import org.apache.spark.sql.connector.catalog.SupportsDeleteV2;
import org.apache.spark.sql.connector.catalog.SupportsMetadataColumns;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsRowLevelOperations;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.write.RowLevelOperationBuilder;
import org.apache.spark.sql.connector.write.RowLevelOperationInfo;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * An icefloe table in Spark: read through the connector's scan, written through the Rust
 * data-file writer and committed by the driver (writes only at the current snapshot, not for a
 * time-travelled table); its metadata pinned at load. {@code DELETE FROM} removes whole files
 * from metadata when the filter selects whole files (SupportsDeleteV2), else it runs, as {@code
 * UPDATE} and {@code MERGE INTO} do, as a merge-on-read row-level operation ({@link
 * IcefloeDeltaOperation}).
 */
public class IcefloeTable
    implements SupportsRead,
        SupportsWrite,
        SupportsDeleteV2,
        SupportsRowLevelOperations,
        SupportsMetadataColumns {
  private final String name;
  private final NativeCatalog catalog;
  private final Identifier ident;
  private final NativeTable table;
  private final TimeTravel travel;
  private final StructType schema;
  private MetadataColumn[] metadataColumns = null;

  IcefloeTable(
      String name, NativeCatalog catalog, Identifier ident, NativeTable table, TimeTravel travel) {
    this.name = name;
    this.catalog = catalog;
    this.ident = ident;
    this.table = table;
    this.travel = travel;
    this.schema = SparkTypes.schema(travel.schema(table));
  }

  NativeTable nativeTable() {
    return table;
  }

  @Override
  public Transform[] partitioning() {
    return Partitioning.toSpark(table.info().get("spec"), table.info().get("schema"));
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  @SuppressWarnings("deprecation")
  public StructType schema() {
    return schema;
  }

  @Override
  public Map<String, String> properties() {
    Map<String, String> out = new LinkedHashMap<>();
    table.info().path("properties").fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
    JsonNode info = table.info();
    out.put("format", "iceberg/parquet");
    out.put("format-version", info.path("format-version").asText());
    out.put("location", info.path("location").asText());
    out.put("provider", "icefloe");
    return out;
  }

  @Override
  public Set<TableCapability> capabilities() {
    if (travel != TimeTravel.NONE) {
      return EnumSet.of(TableCapability.BATCH_READ);
    }
    return EnumSet.of(
        TableCapability.BATCH_READ,
        TableCapability.BATCH_WRITE,
        TableCapability.TRUNCATE,
        TableCapability.OVERWRITE_BY_FILTER,
        TableCapability.OVERWRITE_DYNAMIC);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    return new IcefloeWriteBuilder(catalog, ident, table, info);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new IcefloeScanBuilder(name, table, travel, schema, options);
  }

  /** Java's metadata columns, their types this table's (the snapshot's, for time travel). */
  @Override
  public synchronized MetadataColumn[] metadataColumns() {
    // Spark asks during each analysis: the answer (a plan of the manifest list) is kept
    if (metadataColumns == null) {
      com.fasterxml.jackson.databind.node.ObjectNode request = Json.object();
      travel.addTo(request);
      metadataColumns = MetadataColumns.of(table.metadataColumns(Json.write(request))).all();
    }
    return metadataColumns.clone();
  }

  private void checkWritable(String what) {
    if (catalog == null || ident == null) {
      throw new UnsupportedOperationException(what + " needs a table loaded from icefloe's SparkCatalog");
    }
    if (travel != TimeTravel.NONE) {
      throw new UnsupportedOperationException(
          "Cannot " + what + " a table at a specific snapshot or time (" + travel + ")");
    }
  }

  /**
   * Whether the predicates select whole data files (Java's canDeleteUsingMetadata): then Spark
   * deletes through {@link #deleteWhere} without reading rows. The predicates must translate
   * exactly ({@link DeleteFilters}).
   */
  @Override
  public boolean canDeleteWhere(Predicate[] predicates) {
    checkWritable("delete from");
    JsonNode filter = DeleteFilters.exact(predicates, table.info().get("schema"));
    return filter != null && table.deletesWholeFiles(Json.write(filter));
  }

  @Override
  public void deleteWhere(Predicate[] predicates) {
    checkWritable("delete from");
    JsonNode filter = DeleteFilters.exact(predicates, table.info().get("schema"));
    if (filter == null) {
      throw new IllegalArgumentException("cannot delete from metadata with " + java.util.Arrays.toString(predicates));
    }
    if (filter.isBoolean() && !filter.asBoolean()) {
      return; // nothing to delete, as Java's deleteWhere
    }
    com.fasterxml.jackson.databind.node.ObjectNode request = commitRequest();
    request.set("filter", filter);
    catalog.deleteWhere(Json.write(request));
  }

  /** The table's identifier and the summary properties of a commit from Spark. */
  com.fasterxml.jackson.databind.node.ObjectNode commitRequest() {
    com.fasterxml.jackson.databind.node.ObjectNode request = Json.object();
    com.fasterxml.jackson.databind.node.ArrayNode ns = request.putArray("namespace");
    for (String level : ident.namespace()) {
      ns.add(level);
    }
    request.put("name", ident.name());
    com.fasterxml.jackson.databind.node.ObjectNode summary = request.putObject("summary");
    SparkSession spark = SparkSession.active();
    summary.put("spark.app.id", spark.sparkContext().applicationId());
    return request;
  }

  @Override
  public RowLevelOperationBuilder newRowLevelOperationBuilder(RowLevelOperationInfo info) {
    checkWritable(info.command().toString().toLowerCase(java.util.Locale.ROOT));
    return () -> new IcefloeDeltaOperation(this, info);
  }

  NativeCatalog catalog() {
    return catalog;
  }

  TimeTravel travel() {
    return travel;
  }

  @Override
  public String toString() {
    return "icefloe " + name;
  }
}
