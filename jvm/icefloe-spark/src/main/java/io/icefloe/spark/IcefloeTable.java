package io.icefloe.spark;

import com.fasterxml.jackson.databind.JsonNode;
import io.icefloe.spark.jni.NativeTable;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** An icefloe table in Spark: read through the connector's scan; its metadata pinned at load. */
public class IcefloeTable implements SupportsRead {
  private final String name;
  private final NativeTable table;
  private final TimeTravel travel;
  private final StructType schema;

  IcefloeTable(String name, NativeTable table, TimeTravel travel) {
    this.name = name;
    this.table = table;
    this.travel = travel;
    this.schema = SparkTypes.schema(travel.schema(table));
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
    return EnumSet.of(TableCapability.BATCH_READ);
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
