// Scan planning entry points into Java Iceberg for icefloe's conformance tests (see
// tests/test_scan_oracle.py): Java's own TableScan.planFiles()/planTasks() on a table opened
// from a metadata file, with the row filter given in the JSON form of expressions.
package org.apache.iceberg;

import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.expressions.Binder;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.ExpressionParser;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.JsonNode;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.iceberg.util.SnapshotUtil;

public final class IcefloeScanOracle {
  private IcefloeScanOracle() {}

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private static Table table(String metadataPath) {
    return new BaseTable(
        new StaticTableOperations(metadataPath, new IcefloeManifestOracle.LocalIO()), metadataPath);
  }

  private static String q(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
  }

  private static String deletesJson(List<DeleteFile> deletes) {
    List<String> out = new ArrayList<>();
    for (DeleteFile d : deletes) {
      out.add(
          "{\"path\":" + q(d.location()) + ",\"content\":" + d.content().id()
              + ",\"offset\":" + d.contentOffset() + "}");
    }
    return "[" + String.join(",", out) + "]";
  }

  private static String residualJson(Expression residual, Schema schema, boolean caseSensitive) {
    Expression bound =
        Binder.bind(schema.asStruct(), Expressions.rewriteNot(residual), caseSensitive);
    return ExpressionParser.toJson(bound);
  }

  private static String taskJson(FileScanTask t, int group, Schema schema, boolean cs) {
    return "{\"group\":" + group
        + ",\"path\":" + q(t.file().location())
        + ",\"start\":" + t.start()
        + ",\"length\":" + t.length()
        + ",\"spec_id\":" + t.file().specId()
        + ",\"data_sequence_number\":" + t.file().dataSequenceNumber()
        + ",\"first_row_id\":" + t.file().firstRowId()
        + ",\"deletes\":" + deletesJson(t.deletes())
        + ",\"residual\":" + residualJson(t.residual(), schema, cs)
        + "}";
  }

  /**
   * Plans a scan and returns its tasks as a JSON array. {@code optionsJson} may hold
   * snapshot_id, ref, as_of (millis), case_sensitive, select (array of names), packed
   * (planTasks instead of planFiles), target_split_size, and incremental_from /
   * incremental_to for an incremental append scan.
   */
  public static String planJson(String metadataPath, String filterJson, String optionsJson)
      throws Exception {
    Table table = table(metadataPath);
    JsonNode o = MAPPER.readTree(optionsJson);
    boolean caseSensitive = !o.has("case_sensitive") || o.get("case_sensitive").asBoolean();
    List<String> out = new ArrayList<>();
    if (o.has("incremental")) {
      IncrementalAppendScan scan = table.newIncrementalAppendScan();
      if (o.has("incremental_from") && !o.get("incremental_from").isNull()) {
        scan = scan.fromSnapshotExclusive(o.get("incremental_from").asLong());
      }
      if (o.has("incremental_to") && !o.get("incremental_to").isNull()) {
        scan = scan.toSnapshot(o.get("incremental_to").asLong());
      }
      if (filterJson != null) {
        scan = scan.filter(ExpressionParser.fromJson(filterJson));
      }
      try (CloseableIterable<FileScanTask> tasks = scan.planFiles()) {
        for (FileScanTask t : tasks) {
          out.add(taskJson(t, -1, table.schema(), true));
        }
      }
      return "[" + String.join(",", out) + "]";
    }
    TableScan scan = table.newScan().caseSensitive(caseSensitive);
    Schema schema = table.schema();
    if (o.has("snapshot_id")) {
      scan = scan.useSnapshot(o.get("snapshot_id").asLong());
      schema = SnapshotUtil.schemaFor(table, o.get("snapshot_id").asLong());
    } else if (o.has("ref")) {
      scan = scan.useRef(o.get("ref").asText());
      schema = SnapshotUtil.schemaFor(table, o.get("ref").asText());
    } else if (o.has("as_of")) {
      scan = scan.asOfTime(o.get("as_of").asLong());
      schema =
          SnapshotUtil.schemaFor(
              table, SnapshotUtil.snapshotIdAsOfTime(table, o.get("as_of").asLong()));
    }
    if (o.has("select")) {
      List<String> cols = new ArrayList<>();
      for (JsonNode c : o.get("select")) {
        cols.add(c.asText());
      }
      scan = scan.select(cols);
    }
    if (o.has("target_split_size")) {
      scan = scan.option(TableProperties.SPLIT_SIZE, o.get("target_split_size").asText());
    }
    if (filterJson != null) {
      Expression filter = ExpressionParser.fromJson(filterJson);
      scan = scan.filter(filter);
    }
    if (o.has("packed") && o.get("packed").asBoolean()) {
      int group = 0;
      try (CloseableIterable<CombinedScanTask> groups = scan.planTasks()) {
        for (CombinedScanTask g : groups) {
          for (FileScanTask t : g.files()) {
            out.add(taskJson(t, group, schema, caseSensitive));
          }
          group++;
        }
      }
    } else {
      try (CloseableIterable<FileScanTask> tasks = scan.planFiles()) {
        for (FileScanTask t : tasks) {
          out.add(taskJson(t, -1, schema, caseSensitive));
        }
      }
    }
    return "[" + String.join(",", out) + "]";
  }

  /**
   * Times Java's planning of a full scan ({@code planFiles()} iterated to the end, tasks counted)
   * {@code repeats} times; returns {"tasks": n, "ms": [..]} as JSON. Used by the planning
   * benchmark (benches/plan_compare.py), not by tests.
   */
  public static String timePlanFiles(String metadataPath, String filterJson, int repeats)
      throws Exception {
    List<String> times = new ArrayList<>();
    long count = 0;
    for (int i = 0; i < repeats; i++) {
      Table table = table(metadataPath);
      TableScan scan = table.newScan();
      if (filterJson != null) {
        scan = scan.filter(ExpressionParser.fromJson(filterJson));
      }
      long start = System.nanoTime();
      count = 0;
      try (CloseableIterable<FileScanTask> tasks = scan.planFiles()) {
        for (FileScanTask t : tasks) {
          count++;
        }
      }
      times.add(String.valueOf((System.nanoTime() - start) / 1_000_000.0));
    }
    return "{\"tasks\":" + count + ",\"ms\":[" + String.join(",", times) + "]}";
  }
}
