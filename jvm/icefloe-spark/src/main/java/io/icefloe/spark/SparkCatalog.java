package io.icefloe.spark;

import io.icefloe.spark.jni.IcefloeAlreadyExistsException;
import io.icefloe.spark.jni.IcefloeNamespaceNotEmptyException;
import io.icefloe.spark.jni.IcefloeNoSuchNamespaceException;
import io.icefloe.spark.jni.IcefloeNoSuchTableException;
import io.icefloe.spark.jni.NativeCatalog;
import io.icefloe.spark.jni.NativeTable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NonEmptyNamespaceException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.catalyst.analysis.NoSuchFunctionException;
import org.apache.spark.sql.connector.catalog.FunctionCatalog;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.connector.catalog.StagingTableCatalog;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.StructType;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.icefloe.spark.jni.IcefloeInvalidArgumentException;
import io.icefloe.spark.jni.IcefloeUnsupportedException;
import io.icefloe.spark.jni.Json;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A Spark catalog over an icefloe catalog (SQLite, file-system or REST), opened by the Rust
 * core from the catalog's Spark options, which are the properties {@code
 * icefloe.load_catalog} takes:
 *
 * <pre>
 * spark.sql.catalog.ice           = io.icefloe.spark.SparkCatalog
 * spark.sql.catalog.ice.type      = sql | filesystem | rest     (default sql)
 * spark.sql.catalog.ice.uri       = sqlite:////data/catalog.db   (or the REST server's URI)
 * spark.sql.catalog.ice.warehouse = file:///data/warehouse
 * spark.sql.catalog.ice.catalog-name = prod    (optional: the name the catalog's rows carry,
 *                                                when it is not the Spark catalog's name)
 * </pre>
 *
 * Reads go through the connector's scan (planning and reading in Rust); writes through the Rust
 * data-file writer and icefloe's commits ({@link IcefloeTable}). DDL follows Java Iceberg's
 * SparkCatalog: {@code CREATE TABLE} (schema, {@code PARTITIONED BY}, {@code TBLPROPERTIES}
 * including {@code format-version}, {@code LOCATION}), {@code ALTER TABLE} (columns and
 * properties in one commit), {@code DROP TABLE [PURGE]}. As Java's, it is a {@link
 * StagingTableCatalog}: {@code CREATE TABLE ... AS SELECT}, {@code REPLACE TABLE [AS SELECT]}
 * and {@code CREATE OR REPLACE TABLE [AS SELECT]} commit the table and the query's rows in one
 * commit ({@link IcefloeStagedTable}), a replaced table keeping its history.
 */
public class SparkCatalog implements StagingTableCatalog, SupportsNamespaces, FunctionCatalog {
  private String name;
  private NativeCatalog catalog;

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    this.name = name;
    Map<String, String> properties = new HashMap<>(options.asCaseSensitiveMap());
    // a SQLite catalog keeps the catalog's name in its rows (Java's JdbcCatalog too): a Spark
    // catalog of another name opens them under this one
    String catalogName = properties.remove("catalog-name");
    this.catalog = NativeCatalog.open(catalogName == null ? name : catalogName, properties);
  }

  @Override
  public String name() {
    return name;
  }

  // --- functions ----------------------------------------------------------------------------

  /**
   * Iceberg's partition transforms ({@code years}, {@code months}, {@code days}, {@code hours},
   * {@code bucket}, {@code truncate}), in the namespace {@code system} (or none), as Java's
   * SparkCatalog serves them: what Spark evaluates a write's clustering by partition with.
   */
  @Override
  public Identifier[] listFunctions(String[] namespace) throws NoSuchNamespaceException {
    if (!TransformFunctions.isNamespace(namespace)) {
      throw new NoSuchNamespaceException(namespace);
    }
    Identifier[] out = new Identifier[TransformFunctions.NAMES.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = Identifier.of(namespace, TransformFunctions.NAMES[i]);
    }
    return out;
  }

  @Override
  public UnboundFunction loadFunction(Identifier ident) throws NoSuchFunctionException {
    return TransformFunctions.load(ident);
  }

  // --- namespaces ----------------------------------------------------------------------------

  @Override
  public String[][] listNamespaces() throws NoSuchNamespaceException {
    return listNamespaces(new String[0]);
  }

  @Override
  public String[][] listNamespaces(String[] namespace) throws NoSuchNamespaceException {
    try {
      return catalog.listNamespaces(namespace).toArray(new String[0][]);
    } catch (IcefloeNoSuchNamespaceException e) {
      throw new NoSuchNamespaceException(namespace);
    }
  }

  @Override
  public boolean namespaceExists(String[] namespace) {
    return catalog.namespaceExists(namespace);
  }

  @Override
  public Map<String, String> loadNamespaceMetadata(String[] namespace)
      throws NoSuchNamespaceException {
    try {
      return catalog.namespaceProperties(namespace);
    } catch (IcefloeNoSuchNamespaceException e) {
      throw new NoSuchNamespaceException(namespace);
    }
  }

  @Override
  public void createNamespace(String[] namespace, Map<String, String> metadata)
      throws NamespaceAlreadyExistsException {
    try {
      catalog.createNamespace(namespace, metadata);
    } catch (IcefloeAlreadyExistsException e) {
      throw new NamespaceAlreadyExistsException(namespace);
    }
  }

  @Override
  public void alterNamespace(String[] namespace, NamespaceChange... changes)
      throws NoSuchNamespaceException {
    Map<String, String> set = new HashMap<>();
    List<String> remove = new ArrayList<>();
    for (NamespaceChange change : changes) {
      if (change instanceof NamespaceChange.SetProperty) {
        NamespaceChange.SetProperty s = (NamespaceChange.SetProperty) change;
        set.put(s.property(), s.value());
      } else if (change instanceof NamespaceChange.RemoveProperty) {
        remove.add(((NamespaceChange.RemoveProperty) change).property());
      } else {
        throw new UnsupportedOperationException("namespace change " + change);
      }
    }
    try {
      catalog.updateNamespaceProperties(namespace, set, remove);
    } catch (IcefloeNoSuchNamespaceException e) {
      throw new NoSuchNamespaceException(namespace);
    }
  }

  @Override
  public boolean dropNamespace(String[] namespace, boolean cascade)
      throws NoSuchNamespaceException, NonEmptyNamespaceException {
    try {
      if (cascade) {
        for (String table : catalog.listTables(namespace)) {
          catalog.dropTable(namespace, table);
        }
      }
      catalog.dropNamespace(namespace);
      return true;
    } catch (IcefloeNoSuchNamespaceException e) {
      throw new NoSuchNamespaceException(namespace);
    } catch (IcefloeNamespaceNotEmptyException e) {
      throw new NonEmptyNamespaceException(namespace);
    }
  }

  // --- tables --------------------------------------------------------------------------------

  @Override
  public Identifier[] listTables(String[] namespace) throws NoSuchNamespaceException {
    try {
      return catalog.listTables(namespace).stream()
          .map(t -> Identifier.of(namespace, t))
          .toArray(Identifier[]::new);
    } catch (IcefloeNoSuchNamespaceException e) {
      throw new NoSuchNamespaceException(namespace);
    }
  }

  private NativeTable load(Identifier ident) throws NoSuchTableException {
    try {
      return catalog.loadTable(ident.namespace(), ident.name());
    } catch (IcefloeNoSuchTableException | IcefloeNoSuchNamespaceException e) {
      throw new NoSuchTableException(ident);
    }
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    return new IcefloeTable(name + "." + ident, catalog, ident, load(ident), TimeTravel.NONE);
  }

  /** {@code VERSION AS OF}: a snapshot id, or a branch or tag name. */
  @Override
  public Table loadTable(Identifier ident, String version) throws NoSuchTableException {
    TimeTravel travel =
        version.chars().allMatch(Character::isDigit) && !version.isEmpty()
            ? TimeTravel.snapshot(Long.parseLong(version))
            : TimeTravel.ref(version);
    return new IcefloeTable(name + "." + ident, catalog, ident, load(ident), travel);
  }

  /** {@code TIMESTAMP AS OF}: Spark gives microseconds since the epoch. */
  @Override
  public Table loadTable(Identifier ident, long timestampMicros) throws NoSuchTableException {
    return new IcefloeTable(
        name + "." + ident, catalog, ident, load(ident), TimeTravel.asOf(Math.floorDiv(timestampMicros, 1000L)));
  }

  @Override
  public boolean tableExists(Identifier ident) {
    return catalog.tableExists(ident.namespace(), ident.name());
  }

  @Override
  @SuppressWarnings("deprecation")
  public Table createTable(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    create(ident, schema, partitions, properties, "create");
    try {
      return loadTable(ident);
    } catch (NoSuchTableException e) {
      throw new IllegalStateException("the table " + ident + " vanished after its creation");
    }
  }

  /** Creates or replaces a table (mode {@code create}, {@code replace}, {@code create-or-replace}). */
  void create(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties, String mode)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    try {
      catalog.createTable(createRequest(ident, schema, partitions, properties, mode));
    } catch (IcefloeAlreadyExistsException e) {
      throw new TableAlreadyExistsException(ident);
    } catch (IcefloeNoSuchNamespaceException e) {
      throw new NoSuchNamespaceException(ident.namespace());
    } catch (IcefloeInvalidArgumentException | IcefloeUnsupportedException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }

  /** The request of a create or replace (crates/icefloe-jni/src/ddl.rs). */
  private static ObjectNode createRequest(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties, String mode) {
    ObjectNode request = Json.object();
    ArrayNode ns = request.putArray("namespace");
    for (String level : ident.namespace()) {
      ns.add(level);
    }
    request.put("name", ident.name());
    request.set("schema", Partitioning.schema(schema));
    request.set("partitioning", Partitioning.partitioning(partitions));
    if (properties.get(TableCatalog.PROP_LOCATION) != null) {
      request.put("location", properties.get(TableCatalog.PROP_LOCATION));
    }
    // Java's Spark3Util.rebuildCreateProperties: location and provider are not table properties
    ObjectNode props = request.putObject("properties");
    for (Map.Entry<String, String> e : properties.entrySet()) {
      String key = e.getKey();
      if (!key.equals(TableCatalog.PROP_LOCATION) && !key.equals(TableCatalog.PROP_PROVIDER)) {
        props.put(key, e.getValue());
      }
    }
    String provider = properties.get(TableCatalog.PROP_PROVIDER);
    if ("parquet".equalsIgnoreCase(provider) || "avro".equalsIgnoreCase(provider) || "orc".equalsIgnoreCase(provider)) {
      props.put("write.format.default", provider.toLowerCase());
    }
    // Java 1.11's default for new tables (icefloe's own default, v3, is for its Python API); a
    // replaced table keeps its version unless the properties name one, as Java's
    request.put("default-format-version", 2);
    request.put("mode", mode);
    return request;
  }

  // --- staged creates and replacements (StagingTableCatalog) ---------------------------------

  @Override
  @SuppressWarnings("deprecation")
  public StagedTable stageCreate(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    try {
      return stage(ident, schema, partitions, properties, "create");
    } catch (NoSuchTableException e) {
      throw new IllegalStateException("a staged create needs no table", e);
    }
  }

  @Override
  @SuppressWarnings("deprecation")
  public StagedTable stageReplace(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws NoSuchNamespaceException, NoSuchTableException {
    try {
      return stage(ident, schema, partitions, properties, "replace");
    } catch (TableAlreadyExistsException e) {
      throw new IllegalStateException("a staged replace needs the table", e);
    }
  }

  @Override
  @SuppressWarnings("deprecation")
  public StagedTable stageCreateOrReplace(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws NoSuchNamespaceException {
    try {
      return stage(ident, schema, partitions, properties, "create-or-replace");
    } catch (TableAlreadyExistsException | NoSuchTableException e) {
      throw new IllegalStateException("a staged create-or-replace of " + ident + " failed", e);
    }
  }

  private StagedTable stage(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties, String mode)
      throws TableAlreadyExistsException, NoSuchNamespaceException, NoSuchTableException {
    ObjectNode request = createRequest(ident, schema, partitions, properties, mode);
    try {
      NativeTable staged = catalog.stageTable(request);
      return new IcefloeStagedTable(name + "." + ident, catalog, ident, staged, request);
    } catch (IcefloeAlreadyExistsException e) {
      throw new TableAlreadyExistsException(ident);
    } catch (IcefloeNoSuchTableException e) {
      throw new NoSuchTableException(ident);
    } catch (IcefloeNoSuchNamespaceException e) {
      throw new NoSuchNamespaceException(ident.namespace());
    } catch (IcefloeInvalidArgumentException | IcefloeUnsupportedException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }

  @Override
  public Table alterTable(Identifier ident, TableChange... changes) throws NoSuchTableException {
    ArrayNode out = Json.MAPPER.createArrayNode();
    for (TableChange change : changes) {
      ObjectNode c = out.addObject();
      if (change instanceof TableChange.SetProperty) {
        TableChange.SetProperty s = (TableChange.SetProperty) change;
        c.put("action", "set-property").put("key", s.property()).put("value", s.value());
      } else if (change instanceof TableChange.RemoveProperty) {
        c.put("action", "remove-property").put("key", ((TableChange.RemoveProperty) change).property());
      } else if (change instanceof TableChange.AddColumn) {
        TableChange.AddColumn a = (TableChange.AddColumn) change;
        String[] names = a.fieldNames();
        if (a.defaultValue() != null) {
          throw new UnsupportedOperationException("Cannot add column with a default value");
        }
        c.put("action", "add-column");
        if (names.length > 1) {
          c.put("parent", String.join(".", java.util.Arrays.copyOf(names, names.length - 1)));
        }
        c.put("name", names[names.length - 1]);
        c.set("type", Partitioning.type(a.dataType(), new int[] {0}));
        c.put("required", !a.isNullable());
        if (a.comment() != null) {
          c.put("doc", a.comment());
        }
        position(c, a.position(), names);
      } else if (change instanceof TableChange.RenameColumn) {
        TableChange.RenameColumn r = (TableChange.RenameColumn) change;
        c.put("action", "rename-column").put("name", String.join(".", r.fieldNames())).put("new-name", r.newName());
      } else if (change instanceof TableChange.DeleteColumn) {
        c.put("action", "delete-column").put("name", String.join(".", ((TableChange.DeleteColumn) change).fieldNames()));
      } else if (change instanceof TableChange.UpdateColumnType) {
        TableChange.UpdateColumnType u = (TableChange.UpdateColumnType) change;
        JsonNodeHolder.check(u.newDataType());
        c.put("action", "update-column-type")
            .put("name", String.join(".", u.fieldNames()))
            .put("type", Partitioning.primitive(u.newDataType()));
      } else if (change instanceof TableChange.UpdateColumnComment) {
        TableChange.UpdateColumnComment u = (TableChange.UpdateColumnComment) change;
        c.put("action", "update-column-doc").put("name", String.join(".", u.fieldNames())).put("doc", u.newComment());
      } else if (change instanceof TableChange.UpdateColumnNullability) {
        TableChange.UpdateColumnNullability u = (TableChange.UpdateColumnNullability) change;
        c.put("action", "set-nullability").put("name", String.join(".", u.fieldNames())).put("nullable", u.nullable());
      } else if (change instanceof TableChange.UpdateColumnPosition) {
        TableChange.UpdateColumnPosition u = (TableChange.UpdateColumnPosition) change;
        c.put("action", "move").put("name", String.join(".", u.fieldNames()));
        position(c, u.position(), u.fieldNames());
      } else {
        throw new UnsupportedOperationException("icefloe's Spark catalog cannot apply " + change);
      }
    }
    try {
      catalog.alterTable(ident.namespace(), ident.name(), out);
    } catch (IcefloeNoSuchTableException | IcefloeNoSuchNamespaceException e) {
      throw new NoSuchTableException(ident);
    } catch (IcefloeInvalidArgumentException | IcefloeUnsupportedException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
    return loadTable(ident);
  }

  private static void position(ObjectNode c, TableChange.ColumnPosition position, String[] names) {
    if (position instanceof TableChange.First) {
      c.put("position", "first");
    } else if (position instanceof TableChange.After) {
      String after = ((TableChange.After) position).column();
      String parent =
          names.length > 1 ? String.join(".", java.util.Arrays.copyOf(names, names.length - 1)) + "." : "";
      c.put("position", "after").put("after", parent + after);
    }
  }

  /** Java's check: a column's type changes only to another primitive type. */
  private static final class JsonNodeHolder {
    static void check(org.apache.spark.sql.types.DataType t) {
      if (t instanceof StructType
          || t instanceof org.apache.spark.sql.types.ArrayType
          || t instanceof org.apache.spark.sql.types.MapType) {
        throw new IllegalArgumentException("Cannot update column type to a non-primitive type: " + t.simpleString());
      }
    }
  }

  @Override
  public boolean purgeTable(Identifier ident) {
    try {
      catalog.purgeTable(ident.namespace(), ident.name());
      return true;
    } catch (IcefloeNoSuchTableException | IcefloeNoSuchNamespaceException e) {
      return false;
    }
  }

  @Override
  public boolean dropTable(Identifier ident) {
    try {
      catalog.dropTable(ident.namespace(), ident.name());
      return true;
    } catch (IcefloeNoSuchTableException | IcefloeNoSuchNamespaceException e) {
      return false;
    }
  }

  @Override
  public void renameTable(Identifier from, Identifier to) throws NoSuchTableException {
    try {
      catalog.renameTable(from.namespace(), from.name(), to.namespace(), to.name());
    } catch (IcefloeNoSuchTableException e) {
      throw new NoSuchTableException(from);
    }
  }
}
