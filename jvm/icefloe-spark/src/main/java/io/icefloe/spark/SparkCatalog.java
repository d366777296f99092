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
import org.apache.spark.sql.catalyst.analysis.NonEmptyNamespaceException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
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
 * Reads go through the connector's scan (planning and reading in Rust). Creating, altering and
 * writing tables are not supported yet: use icefloe's Python API or the Python data source.
 */
public class SparkCatalog implements TableCatalog, SupportsNamespaces {
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
    return new IcefloeTable(name + "." + ident, load(ident), TimeTravel.NONE, catalog, ident);
  }

  /** {@code VERSION AS OF}: a snapshot id, or a branch or tag name. */
  @Override
  public Table loadTable(Identifier ident, String version) throws NoSuchTableException {
    TimeTravel travel =
        version.chars().allMatch(Character::isDigit) && !version.isEmpty()
            ? TimeTravel.snapshot(Long.parseLong(version))
            : TimeTravel.ref(version);
    return new IcefloeTable(name + "." + ident, load(ident), travel);
  }

  /** {@code TIMESTAMP AS OF}: Spark gives microseconds since the epoch. */
  @Override
  public Table loadTable(Identifier ident, long timestampMicros) throws NoSuchTableException {
    return new IcefloeTable(
        name + "." + ident, load(ident), TimeTravel.asOf(Math.floorDiv(timestampMicros, 1000L)));
  }

  @Override
  public boolean tableExists(Identifier ident) {
    return catalog.tableExists(ident.namespace(), ident.name());
  }

  @Override
  public Table alterTable(Identifier ident, TableChange... changes) {
    throw new UnsupportedOperationException(
        "icefloe's Spark catalog does not alter tables yet (use icefloe's Python API)");
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
