// Batch entry points into Java Iceberg for icefloe's conformance tests.
// Called from Python through py4j: one call per batch keeps the bridge cheap.
// Values cross the bridge as single-value JSON strings (spec Appendix D).
package icefloe.oracle;

import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.SingleValueParser;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.mapping.MappingUtil;
import org.apache.iceberg.mapping.NameMapping;
import org.apache.iceberg.mapping.NameMappingParser;
import org.apache.iceberg.transforms.Transform;
import org.apache.iceberg.transforms.Transforms;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SerializableFunction;
import org.apache.iceberg.view.ViewMetadata;
import org.apache.iceberg.view.ViewMetadataParser;

public final class IcefloeOracle {
  private IcefloeOracle() {}

  /** Result type of {@code transform} applied to {@code type}, as an Iceberg type string. */
  public static String resultType(String transform, String type) {
    Type source = Types.fromPrimitiveString(type);
    return Transforms.fromString(source, transform).getResultType(source).toString();
  }

  /**
   * Applies a transform to every value. Inputs and outputs are single-value JSON; a JSON
   * {@code null} (or a Java null element) stands for a null value. A value Java rejects yields
   * {@code "!error: <message>"} instead of aborting the whole batch.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static String[] applyTransform(String transform, String type, String[] jsonValues) {
    Type source = Types.fromPrimitiveString(type);
    Transform t = Transforms.fromString(source, transform);
    Type resultType = t.getResultType(source);
    SerializableFunction fn = t.bind(source);
    String[] out = new String[jsonValues.length];
    for (int i = 0; i < jsonValues.length; i++) {
      String json = jsonValues[i];
      try {
        Object value =
            (json == null || json.trim().equals("null")) ? null : SingleValueParser.fromJson(source, json);
        Object result = fn.apply(value);
        out[i] = result == null ? "null" : SingleValueParser.toJson(resultType, result);
      } catch (RuntimeException e) {
        out[i] = ("!error: " + e).replace('\n', ' ');
      }
    }
    return out;
  }

  /**
   * Same as {@link #applyTransform} with values joined by '\n' (single-value JSON never contains a
   * raw newline). py4j converts strings in one round trip but arrays element by element, so this
   * is the fast path for large batches.
   */
  public static String applyTransformLines(String transform, String type, String jsonLines) {
    String[] values = jsonLines.isEmpty() ? new String[0] : jsonLines.split("\n", -1);
    return String.join("\n", applyTransform(transform, type, values));
  }

  /**
   * Fields of the current schema of a metadata document, one per line:
   * {@code id \t full.name \t required \t type}, in id order.
   */
  public static String currentSchemaFields(String metadataJson) {
    Schema schema = TableMetadataParser.fromJson(metadataJson).schema();
    java.util.Map<Integer, String> names = org.apache.iceberg.types.TypeUtil.indexNameById(schema.asStruct());
    StringBuilder sb = new StringBuilder();
    for (Integer id : new java.util.TreeSet<>(names.keySet())) {
      Types.NestedField field = schema.findField(id);
      if (sb.length() > 0) sb.append('\n');
      sb.append(id).append('\t').append(names.get(id)).append('\t').append(field.isRequired())
          .append('\t').append(field.type());
    }
    return sb.toString();
  }

  /** Parses and re-serialises each single-value JSON string (Java's canonical form). */
  public static String[] canonicalValues(String type, String[] jsonValues) {
    Type t = Types.fromPrimitiveString(type);
    String[] out = new String[jsonValues.length];
    for (int i = 0; i < jsonValues.length; i++) {
      String json = jsonValues[i];
      out[i] =
          (json == null || json.trim().equals("null"))
              ? "null"
              : SingleValueParser.toJson(t, SingleValueParser.fromJson(t, json));
    }
    return out;
  }

  public static String roundTripMetadata(String json) {
    return TableMetadataParser.toJson(TableMetadataParser.fromJson(json));
  }

  /** Reads a metadata file (plain or gzip) from the local file system through Java's reader and serialises it. */
  public static String readMetadataFile(String path) {
    TableMetadata md = TableMetadataParser.read(org.apache.iceberg.Files.localInput(path));
    return TableMetadataParser.toJson(md);
  }

  /** A few facts Java derives from table metadata, as a flat JSON object built by hand. */
  public static String metadataFacts(String json) {
    TableMetadata md = TableMetadataParser.fromJson(json);
    StringBuilder sb = new StringBuilder("{");
    sb.append("\"format-version\":").append(md.formatVersion());
    sb.append(",\"table-uuid\":\"").append(md.uuid()).append('"');
    sb.append(",\"last-sequence-number\":").append(md.lastSequenceNumber());
    sb.append(",\"current-schema-id\":").append(md.currentSchemaId());
    sb.append(",\"default-spec-id\":").append(md.defaultSpecId());
    sb.append(",\"default-sort-order-id\":").append(md.defaultSortOrderId());
    sb.append(",\"last-column-id\":").append(md.lastColumnId());
    sb.append(",\"current-snapshot-id\":")
        .append(md.currentSnapshot() == null ? "null" : Long.toString(md.currentSnapshot().snapshotId()));
    sb.append(",\"schema-count\":").append(md.schemas().size());
    sb.append(",\"spec-count\":").append(md.specs().size());
    sb.append(",\"snapshot-count\":").append(md.snapshots().size());
    sb.append(",\"ref-names\":[");
    List<String> names = new java.util.ArrayList<>(md.refs().keySet());
    java.util.Collections.sort(names);
    for (int i = 0; i < names.size(); i++) {
      if (i > 0) sb.append(',');
      sb.append('"').append(names.get(i)).append('"');
    }
    sb.append("]}");
    return sb.toString();
  }

  public static String roundTripViewMetadata(String json) {
    ViewMetadata md = ViewMetadataParser.fromJson(json);
    return ViewMetadataParser.toJson(md);
  }

  public static String roundTripNameMapping(String json) {
    NameMapping mapping = NameMappingParser.fromJson(json);
    return NameMappingParser.toJson(mapping);
  }

  /** Name mapping Java derives from a schema (schema given as Iceberg schema JSON). */
  public static String nameMappingForSchema(String schemaJson) {
    Schema schema = SchemaParser.fromJson(schemaJson);
    return NameMappingParser.toJson(MappingUtil.create(schema));
  }

  /**
   * Adds v3 columns with default values through the Java API (Spark SQL refuses DEFAULT for
   * Iceberg tables): an optional int with write/initial default 42 and a required string with
   * default "unknown".
   */
  public static void addColumnsWithDefaults(org.apache.iceberg.catalog.Catalog catalog, String ident) {
    org.apache.iceberg.Table table =
        catalog.loadTable(org.apache.iceberg.catalog.TableIdentifier.parse(ident));
    table
        .updateSchema()
        .addColumn("with_default", Types.IntegerType.get(), "int with a default",
            org.apache.iceberg.expressions.Literal.of(42))
        .addRequiredColumn("required_default", Types.StringType.get(), "required, default 'unknown'",
            org.apache.iceberg.expressions.Literal.of("unknown"))
        .commit();
  }

  /** Iceberg schema JSON of the current schema of a metadata document. */
  public static String currentSchemaJson(String metadataJson) {
    return SchemaParser.toJson(TableMetadataParser.fromJson(metadataJson).schema());
  }
}
