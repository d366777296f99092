// In Java Iceberg's own package: SchemaUpdate's (Schema, lastColumnId) constructor is
// package-private (tests use it the same way).
package org.apache.iceberg;

import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.Literal;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.JsonNode;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.iceberg.types.Type;

/**
 * Applies a list of schema changes (JSON) with Java's SchemaUpdate, for the icefloe schema
 * evolution oracle. Returns the new schema's JSON, or "ERROR: message" when Java refuses.
 */
public class IcefloeSchemaUpdateOracle {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  public static String apply(String schemaJson, int lastColumnId, String opsJson) {
    Schema schema = SchemaParser.fromJson(schemaJson);
    SchemaUpdate update = new SchemaUpdate(schema, lastColumnId);
    try {
      JsonNode ops = MAPPER.readTree(opsJson);
      for (JsonNode op : ops) {
        applyOne(update, op);
      }
      Schema result = update.apply();
      return SchemaParser.toJson(result);
    } catch (IllegalArgumentException | IllegalStateException e) {
      return "ERROR: " + e.getMessage();
    } catch (Exception e) {
      return "ERROR: " + e;
    }
  }

  private static String text(JsonNode op, String field) {
    JsonNode v = op.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  /** A type from its JSON form (a string for primitives), read through a one-field schema. */
  private static Type type(JsonNode typeJson) throws Exception {
    String wrapped =
        "{\"type\":\"struct\",\"fields\":[{\"id\":1000000,\"name\":\"t\",\"required\":false,\"type\":"
            + MAPPER.writeValueAsString(typeJson)
            + "}]}";
    return SchemaParser.fromJson(wrapped).findField(1000000).type();
  }

  private static Literal<?> literal(Type type, JsonNode value) {
    if (value == null || value.isNull()) {
      return null;
    }
    return Expressions.lit(SingleValueParser.fromJson(type, value));
  }

  private static void applyOne(SchemaUpdate u, JsonNode op) throws Exception {
    String kind = op.get("op").asText();
    switch (kind) {
      case "case-sensitive":
        u.caseSensitive(op.get("value").asBoolean());
        break;
      case "allow-incompatible":
        u.allowIncompatibleChanges();
        break;
      case "add": {
        Type t = type(op.get("type"));
        Literal<?> def = literal(t, op.get("default"));
        String parent = text(op, "parent");
        if (op.get("required").asBoolean()) {
          u.addRequiredColumn(parent, text(op, "name"), t, text(op, "doc"), def);
        } else {
          u.addColumn(parent, text(op, "name"), t, text(op, "doc"), def);
        }
        break;
      }
      case "delete":
        u.deleteColumn(text(op, "name"));
        break;
      case "rename":
        u.renameColumn(text(op, "name"), text(op, "new-name"));
        break;
      case "update":
        u.updateColumn(text(op, "name"), type(op.get("type")).asPrimitiveType());
        break;
      case "require":
        u.requireColumn(text(op, "name"));
        break;
      case "optional":
        u.makeColumnOptional(text(op, "name"));
        break;
      case "doc":
        u.updateColumnDoc(text(op, "name"), text(op, "doc"));
        break;
      case "move-first":
        u.moveFirst(text(op, "name"));
        break;
      case "move-before":
        u.moveBefore(text(op, "name"), text(op, "other"));
        break;
      case "move-after":
        u.moveAfter(text(op, "name"), text(op, "other"));
        break;
      case "identifiers": {
        java.util.List<String> names = new java.util.ArrayList<>();
        op.get("names").forEach(n -> names.add(n.asText()));
        u.setIdentifierFields(names);
        break;
      }
      case "union":
        u.unionByNameWith(SchemaParser.fromJson(MAPPER.writeValueAsString(op.get("schema"))));
        break;
      default:
        throw new IllegalStateException("unknown op " + kind);
    }
  }

  private IcefloeSchemaUpdateOracle() {}
}
