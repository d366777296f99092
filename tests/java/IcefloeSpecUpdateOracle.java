// In Java Iceberg's own package: BaseUpdatePartitionSpec's constructor is package-private.
package org.apache.iceberg;

import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.Term;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.JsonNode;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.iceberg.transforms.Transforms;

/**
 * Applies partition spec changes with Java's BaseUpdatePartitionSpec, and sort order changes
 * with SortOrder.Builder (what BaseReplaceSortOrder uses), for the icefloe spec update oracle.
 * Each change is tried in turn (a refused one is reported and the next one still tried, so the
 * state a refusal leaves behind is compared too), then the result is applied.
 */
public class IcefloeSpecUpdateOracle {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** Only current() is used: the update reads the table's specs and last partition id. */
  private static TableOperations opsFor(TableMetadata metadata) {
    return new TableOperations() {
      @Override
      public TableMetadata current() {
        return metadata;
      }

      @Override
      public TableMetadata refresh() {
        return metadata;
      }

      @Override
      public void commit(TableMetadata base, TableMetadata updated) {
        throw new UnsupportedOperationException("the oracle never commits");
      }

      @Override
      public FileIO io() {
        throw new UnsupportedOperationException("the oracle has no files");
      }

      @Override
      public String metadataFileLocation(String fileName) {
        throw new UnsupportedOperationException("the oracle has no files");
      }

      @Override
      public LocationProvider locationProvider() {
        throw new UnsupportedOperationException("the oracle has no files");
      }
    };
  }

  private static String text(JsonNode op, String field) {
    JsonNode v = op.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  private static Term term(String source, String transform) {
    if (transform == null || transform.equals("identity")) {
      return Expressions.ref(source);
    }
    return Expressions.transform(source, Transforms.fromString(transform));
  }

  private static String error(Exception e) {
    return "ERROR: " + e.getClass().getSimpleName() + ": " + e.getMessage();
  }

  /**
   * {"init": "ok" or error, "results": ["ok" or error per change], "spec": fields JSON or
   * "apply": error, "last-partition-id": n}.
   */
  public static String applyPartition(String metadataJson, String opsJson) throws Exception {
    TableMetadata base = TableMetadataParser.fromJson(metadataJson);
    ObjectNode out = MAPPER.createObjectNode();
    BaseUpdatePartitionSpec update;
    try {
      update = new BaseUpdatePartitionSpec(opsFor(base));
      out.put("init", "ok");
    } catch (RuntimeException e) {
      out.put("init", error(e));
      return MAPPER.writeValueAsString(out);
    }
    ArrayNode results = out.putArray("results");
    for (JsonNode op : MAPPER.readTree(opsJson)) {
      try {
        String kind = op.get("op").asText();
        switch (kind) {
          case "case-sensitive":
            update.caseSensitive(op.get("value").asBoolean());
            break;
          case "add":
            update.addField(text(op, "name"), term(text(op, "source"), text(op, "transform")));
            break;
          case "add-identity":
            update.addField(text(op, "source"));
            break;
          case "remove":
            update.removeField(text(op, "name"));
            break;
          case "remove-term":
            update.removeField(term(text(op, "source"), text(op, "transform")));
            break;
          case "rename":
            update.renameField(text(op, "name"), text(op, "new-name"));
            break;
          default:
            throw new IllegalStateException("unknown op " + kind);
        }
        results.add("ok");
      } catch (RuntimeException e) {
        results.add(error(e));
      }
    }
    try {
      PartitionSpec spec = update.apply();
      out.set("spec", MAPPER.readTree(PartitionSpecParser.toJson(spec)));
      // what the table metadata builder records when the spec is added
      out.put(
          "last-partition-id",
          Math.max(base.lastAssignedPartitionId(), spec.lastAssignedFieldId()));
    } catch (RuntimeException e) {
      out.put("apply", error(e));
    }
    return MAPPER.writeValueAsString(out);
  }

  /** {"results": [...], "order": order JSON or "apply": error}. */
  public static String applySort(String schemaJson, String opsJson) throws Exception {
    Schema schema = SchemaParser.fromJson(schemaJson);
    SortOrder.Builder builder = SortOrder.builderFor(schema);
    ObjectNode out = MAPPER.createObjectNode();
    ArrayNode results = out.putArray("results");
    for (JsonNode op : MAPPER.readTree(opsJson)) {
      try {
        String kind = op.get("op").asText();
        Term t = null;
        NullOrder nulls = null;
        if (!kind.equals("case-sensitive")) {
          t = term(text(op, "source"), text(op, "transform"));
          nulls =
              text(op, "null-order").equals("nulls-first")
                  ? NullOrder.NULLS_FIRST
                  : NullOrder.NULLS_LAST;
        }
        switch (kind) {
          case "case-sensitive":
            builder.caseSensitive(op.get("value").asBoolean());
            break;
          case "asc":
            builder.asc(t, nulls);
            break;
          case "desc":
            builder.desc(t, nulls);
            break;
          default:
            throw new IllegalStateException("unknown op " + kind);
        }
        results.add("ok");
      } catch (RuntimeException e) {
        results.add(error(e));
      }
    }
    try {
      out.set("order", MAPPER.readTree(SortOrderParser.toJson(builder.build())));
    } catch (RuntimeException e) {
      out.put("apply", error(e));
    }
    return MAPPER.writeValueAsString(out);
  }

  private IcefloeSpecUpdateOracle() {}
}
