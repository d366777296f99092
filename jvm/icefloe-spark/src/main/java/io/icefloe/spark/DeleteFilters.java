package io.icefloe.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.filter.Predicate;

/**
 * Spark predicates as icefloe row filters that select exactly the rows Spark's predicates
 * select, for {@code DELETE FROM} from metadata (SupportsDeleteV2): unlike {@link Filters}, which
 * may widen a filter for pruning, a delete must not remove a row Spark would keep. Only
 * conjunctions and disjunctions of comparisons, {@code IN} without nulls, null checks and {@code
 * STARTS_WITH} on columns whose order Iceberg and Spark share qualify: no negation (Iceberg's
 * {@code not-eq} holds for null values, Spark's {@code <>} does not), no part left out. Anything
 * else is a row-level delete.
 */
final class DeleteFilters {
  private DeleteFilters() {}

  /** The conjunction of the predicates as one exact filter, or null when one does not qualify. */
  static JsonNode exact(Predicate[] predicates, JsonNode schema) {
    JsonNode out = BooleanNode.TRUE;
    for (Predicate p : predicates) {
      JsonNode one = exact(p, schema);
      if (one == null) {
        return null;
      }
      out = out.isBoolean() && out.asBoolean() ? one : Filters.binary("and", out, one);
    }
    return out;
  }

  private static JsonNode exact(Predicate p, JsonNode schema) {
    Expression[] children = p.children();
    switch (p.name()) {
      case "ALWAYS_TRUE":
        return BooleanNode.TRUE;
      case "ALWAYS_FALSE":
        return BooleanNode.FALSE;
      case "AND":
      case "OR":
        {
          if (!(children[0] instanceof Predicate) || !(children[1] instanceof Predicate)) {
            return null;
          }
          JsonNode left = exact((Predicate) children[0], schema);
          JsonNode right = exact((Predicate) children[1], schema);
          if (left == null || right == null) {
            return null;
          }
          return Filters.binary(p.name().equals("AND") ? "and" : "or", left, right);
        }
      case "=":
      case "<":
      case "<=":
      case ">":
      case ">=":
      case "IS_NULL":
      case "IS_NOT_NULL":
      case "STARTS_WITH":
        return Filters.translate(p, schema);
      case "<=>":
        // a <=> NULL is a null check, a <=> v (v not null) is a = v where nulls are false
        return Filters.translate(p, schema);
      case "IN":
        for (int i = 1; i < children.length; i++) {
          if (!(children[i] instanceof Literal) || ((Literal<?>) children[i]).value() == null) {
            return null;
          }
        }
        return Filters.translate(p, schema);
      default:
        return null;
    }
  }
}
