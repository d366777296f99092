package io.icefloe.spark;

import com.fasterxml.jackson.databind.JsonNode;
import io.icefloe.spark.jni.NativeCatalog;
import io.icefloe.spark.jni.NativeTable;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * An icefloe table in Spark: read through the connector's scan, written through the Rust
 * data-file writer and committed by the driver (writes only at the current snapshot, not for a
 * time-travelled table); its metadata pinned at load.
 */
public class IcefloeTable implements SupportsRead, SupportsWrite {
  private final String name;
  private final NativeCatalog catalog;
  private final Identifier ident;
  private final NativeTable table;
  private final TimeTravel travel;
  private final StructType schema;

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

  @Override
  public String toString() {
    return "icefloe " + name;
  }
}
