// Manifest, manifest list and deletion-vector entry points into Java Iceberg for icefloe's
// conformance tests (see tests/test_manifest_oracle.py).
//
// The class lives in package org.apache.iceberg so that it can use Java's own manifest list reader
// (ManifestLists) and manifest entries with their status (ManifestEntry), which are package-private.
// Both jars are on the driver class path (one class loader), so the package is shared at run time.
//
// Everything is returned as JSON text built from plain maps/lists by a tiny serialiser below:
// binary values (bounds, key metadata) as upper-case hex, partition values as single-value JSON
// (spec Appendix D) together with the partition field's Iceberg type.
package org.apache.iceberg;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.puffin.BlobMetadata;
import org.apache.iceberg.puffin.Puffin;
import org.apache.iceberg.puffin.PuffinReader;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

public final class IcefloeManifestOracle {
  private IcefloeManifestOracle() {}

  /** Local-file FileIO (file: URIs or plain paths); keeps Hadoop off the compile class path. */
  static final class LocalIO implements FileIO {
    @Override
    public InputFile newInputFile(String path) {
      return Files.localInput(localPath(path));
    }

    @Override
    public OutputFile newOutputFile(String path) {
      return Files.localOutput(localPath(path));
    }

    @Override
    public void deleteFile(String path) {
      new java.io.File(localPath(path)).delete();
    }

    @Override
    public Map<String, String> properties() {
      return new java.util.HashMap<>();
    }
  }

  private static FileIO io() {
    return new LocalIO();
  }

  private static TableMetadata metadata(String metadataPath) {
    return TableMetadataParser.read(io(), metadataPath);
  }

  // -------------------------------------------------------------------------------------------
  // Reading: manifest lists and manifests as JSON
  // -------------------------------------------------------------------------------------------

  /** Java's manifest files of one snapshot ({@code snapshot.allManifests(io)}), a JSON array. */
  public static String manifestListJson(String metadataPath, long snapshotId) {
    TableMetadata md = metadata(metadataPath);
    List<Object> out = new ArrayList<>();
    for (ManifestFile mf : md.snapshot(snapshotId).allManifests(io())) {
      out.add(manifestFile(mf));
    }
    return json(out);
  }

  /**
   * Every snapshot of a table with its manifest files and, for each manifest, all its entries
   * (live and deleted, in file order) as Java reads them with inheritance from the manifest list:
   * {@code {"format_version", "snapshots": [{"snapshot_id", "parent_snapshot_id",
   * "sequence_number", "first_row_id", "added_rows", "manifest_list", "manifests": [...], "entries": [[...]]}]}}.
   */
  public static String tableManifestsJson(String metadataPath) {
    TableMetadata md = metadata(metadataPath);
    FileIO io = io();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("format_version", md.formatVersion());
    List<Object> snaps = new ArrayList<>();
    for (Snapshot s : md.snapshots()) {
      Map<String, Object> snap = new LinkedHashMap<>();
      snap.put("snapshot_id", s.snapshotId());
      snap.put("parent_snapshot_id", s.parentId());
      snap.put("sequence_number", s.sequenceNumber());
      snap.put("first_row_id", s.firstRowId());
      snap.put("added_rows", s.addedRows());
      snap.put("manifest_list", s.manifestListLocation());
      List<ManifestFile> manifests = s.allManifests(io);
      snap.put("manifests", manifestFiles(manifests));
      snap.put("entries", entriesOf(manifests, io, md.specsById()));
      snaps.add(snap);
    }
    out.put("snapshots", snaps);
    return json(out);
  }

  /**
   * Reads manifest lists (one path per line, e.g. written by icefloe) with Java's list reader and
   * each listed manifest with Java's manifest reader, using the partition specs of the given table
   * metadata. Returns a JSON array, per list: {@code {"manifests": [...], "entries": [[...]]}}.
   */
  public static String readManifestListsJson(String manifestListPaths, String metadataPath) {
    TableMetadata md = metadata(metadataPath);
    FileIO io = io();
    List<Object> out = new ArrayList<>();
    for (String path : manifestListPaths.split("\n")) {
      if (path.isEmpty()) continue;
      List<ManifestFile> manifests = ManifestLists.read(io.newInputFile(path));
      Map<String, Object> one = new LinkedHashMap<>();
      one.put("manifests", manifestFiles(manifests));
      one.put("entries", entriesOf(manifests, io, md.specsById()));
      out.add(one);
    }
    return json(out);
  }

  /**
   * What Java's manifest reader takes from a manifest's own key-value metadata (no table specs
   * given, so the spec and schema come from the file): one JSON object per path (one per line)
   * with "spec" (PartitionSpecParser JSON), "schema" (SchemaParser JSON) and "metadata" (the raw
   * Avro key-value metadata, without "avro." keys).
   */
  public static String manifestSelfDescriptionJson(String manifestPaths) {
    FileIO io = io();
    List<Object> out = new ArrayList<>();
    for (String path : manifestPaths.split("\n")) {
      if (path.isEmpty()) continue;
      Map<String, Object> one = new LinkedHashMap<>();
      try (ManifestReader<DataFile> reader =
          new ManifestReader<>(
              io.newInputFile(path), -1, null, InheritableMetadataFactory.empty(),
              ManifestReader.FileType.DATA_FILES)) {
        one.put("spec", PartitionSpecParser.toJson(reader.spec()));
        one.put("schema", SchemaParser.toJson(reader.spec().schema()));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      one.put("metadata", avroKeyValueMetadata(localPath(path)));
      out.add(one);
    }
    return json(out);
  }

  /** Leaves every entry as stored: no snapshot id, sequence number or first row id inherited. */
  private static final InheritableMetadata AS_STORED =
      new InheritableMetadata() {
        @Override
        public <F extends ContentFile<F>> ManifestEntry<F> apply(ManifestEntry<F> entry) {
          return entry;
        }
      };

  /**
   * Manifests (one path per line) read on their own, as a reader with only the file would: the
   * spec and schema from the file's key-value metadata and nothing inherited from a manifest
   * list, so every entry's fields are as stored (null snapshot ids and sequence numbers stay
   * null; "not committed", so that Java keeps stored first row ids rather than clearing them, as
   * it does for a committed manifest without a first_row_id). One JSON object per path: {@code {"format_version", "content", "entries": [...]}}.
   */
  public static String manifestEntriesAsStoredJson(String manifestPaths) {
    FileIO io = io();
    List<Object> out = new ArrayList<>();
    for (String path : manifestPaths.split("\n")) {
      if (path.isEmpty()) continue;
      Map<String, String> kv = avroKeyValueMetadata(localPath(path));
      boolean deletes = "deletes".equals(kv.get("content"));
      Map<String, Object> one = new LinkedHashMap<>();
      one.put("format_version", Integer.parseInt(kv.getOrDefault("format-version", "1")));
      one.put("content", deletes ? 1 : 0);
      List<Object> entries = new ArrayList<>();
      try {
        if (deletes) {
          try (ManifestReader<DeleteFile> reader =
                  new ManifestReader<>(
                      io.newInputFile(path), -1, null, AS_STORED, null, false, ManifestReader.FileType.DELETE_FILES);
              CloseableIterable<ManifestEntry<DeleteFile>> it = reader.entries()) {
            for (ManifestEntry<DeleteFile> e : it) entries.add(entry(e, reader.spec()));
          }
        } else {
          try (ManifestReader<DataFile> reader =
                  new ManifestReader<>(
                      io.newInputFile(path), -1, null, AS_STORED, null, false, ManifestReader.FileType.DATA_FILES);
              CloseableIterable<ManifestEntry<DataFile>> it = reader.entries()) {
            for (ManifestEntry<DataFile> e : it) entries.add(entry(e, reader.spec()));
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      one.put("entries", entries);
      out.add(one);
    }
    return json(out);
  }

  /** Manifest lists (one path per line) as Java's list reader returns them: per list, the array of manifest files. */
  public static String manifestListsAsStoredJson(String listPaths) {
    FileIO io = io();
    List<Object> out = new ArrayList<>();
    for (String path : listPaths.split("\n")) {
      if (path.isEmpty()) continue;
      out.add(manifestFiles(ManifestLists.read(io.newInputFile(path))));
    }
    return json(out);
  }

  /** The Avro container header's key-value metadata (read by hand: magic, then a map of bytes). */
  private static Map<String, String> avroKeyValueMetadata(String path) {
    Map<String, String> out = new TreeMap<>();
    try (java.io.DataInputStream in =
        new java.io.DataInputStream(new java.io.BufferedInputStream(new java.io.FileInputStream(path)))) {
      byte[] magic = new byte[4];
      in.readFully(magic);
      if (!Arrays.equals(magic, new byte[] {'O', 'b', 'j', 1})) throw new IOException("not an Avro file: " + path);
      while (true) {
        long count = zigzag(in);
        if (count == 0) break;
        if (count < 0) {
          zigzag(in); // block size in bytes
          count = -count;
        }
        for (long i = 0; i < count; i++) {
          String key = new String(bytes(in), java.nio.charset.StandardCharsets.UTF_8);
          String value = new String(bytes(in), java.nio.charset.StandardCharsets.UTF_8);
          if (!key.startsWith("avro.")) out.put(key, value);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  private static long zigzag(java.io.DataInputStream in) throws IOException {
    long raw = 0;
    int shift = 0;
    while (true) {
      int b = in.readUnsignedByte();
      raw |= (long) (b & 0x7f) << shift;
      shift += 7;
      if ((b & 0x80) == 0) break;
    }
    return (raw >>> 1) ^ -(raw & 1);
  }

  private static byte[] bytes(java.io.DataInputStream in) throws IOException {
    byte[] b = new byte[(int) zigzag(in)];
    in.readFully(b);
    return b;
  }

  private static List<Object> manifestFiles(List<ManifestFile> manifests) {
    List<Object> out = new ArrayList<>();
    for (ManifestFile mf : manifests) out.add(manifestFile(mf));
    return out;
  }

  private static List<Object> entriesOf(
      List<ManifestFile> manifests, FileIO io, Map<Integer, PartitionSpec> specs) {
    List<Object> out = new ArrayList<>();
    for (ManifestFile mf : manifests) {
      List<Object> entries = new ArrayList<>();
      try {
        if (mf.content() == ManifestContent.DATA) {
          try (ManifestReader<DataFile> reader = ManifestFiles.read(mf, io, specs);
              CloseableIterable<ManifestEntry<DataFile>> it = reader.entries()) {
            for (ManifestEntry<DataFile> e : it) entries.add(entry(e, specs));
          }
        } else {
          try (ManifestReader<DeleteFile> reader = ManifestFiles.readDeleteManifest(mf, io, specs);
              CloseableIterable<ManifestEntry<DeleteFile>> it = reader.entries()) {
            for (ManifestEntry<DeleteFile> e : it) entries.add(entry(e, specs));
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      out.add(entries);
    }
    return out;
  }

  private static Map<String, Object> manifestFile(ManifestFile mf) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("manifest_path", mf.path());
    m.put("manifest_length", mf.length());
    m.put("partition_spec_id", mf.partitionSpecId());
    m.put("content", mf.content().id());
    m.put("sequence_number", mf.sequenceNumber());
    m.put("min_sequence_number", mf.minSequenceNumber());
    m.put("added_snapshot_id", mf.snapshotId());
    m.put("added_files_count", mf.addedFilesCount());
    m.put("existing_files_count", mf.existingFilesCount());
    m.put("deleted_files_count", mf.deletedFilesCount());
    m.put("added_rows_count", mf.addedRowsCount());
    m.put("existing_rows_count", mf.existingRowsCount());
    m.put("deleted_rows_count", mf.deletedRowsCount());
    List<Object> parts = null;
    if (mf.partitions() != null) {
      parts = new ArrayList<>();
      for (ManifestFile.PartitionFieldSummary p : mf.partitions()) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("contains_null", p.containsNull());
        s.put("contains_nan", p.containsNaN());
        s.put("lower_bound", hex(p.lowerBound()));
        s.put("upper_bound", hex(p.upperBound()));
        parts.add(s);
      }
    }
    m.put("partitions", parts);
    m.put("key_metadata", hex(mf.keyMetadata()));
    m.put("first_row_id", mf.firstRowId());
    return m;
  }

  // Java's Avro readers reuse containers between records: copy everything out immediately.
  private static <K, V> Map<K, Object> copy(Map<K, V> map) {
    if (map == null) return null;
    Map<K, Object> out = new TreeMap<>();
    for (Map.Entry<K, V> e : map.entrySet()) {
      V v = e.getValue();
      out.put(e.getKey(), v instanceof ByteBuffer ? hex((ByteBuffer) v) : v);
    }
    return out;
  }

  private static <T> List<T> copy(List<T> list) {
    return list == null ? null : new ArrayList<>(list);
  }

  private static String hex(ByteBuffer buffer) {
    if (buffer == null) return null;
    ByteBuffer b = buffer.duplicate();
    StringBuilder hex = new StringBuilder();
    while (b.hasRemaining()) hex.append(String.format("%02X", b.get() & 0xff));
    return hex.toString();
  }

  private static Map<String, Object> entry(ManifestEntry<? extends ContentFile<?>> e, Map<Integer, PartitionSpec> specs) {
    return entry(e, specs.get(e.file().specId()));
  }

  private static Map<String, Object> entry(ManifestEntry<? extends ContentFile<?>> e, PartitionSpec spec) {
    ContentFile<?> f = e.file();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("status", e.status().id());
    m.put("snapshot_id", e.snapshotId());
    m.put("sequence_number", e.dataSequenceNumber());
    m.put("file_sequence_number", e.fileSequenceNumber());
    m.put("content", f.content().id());
    m.put("file_path", f.location());
    m.put("file_format", f.format().toString());
    List<Object> partition = new ArrayList<>();
    List<Types.NestedField> pfields = spec.partitionType().fields();
    for (int i = 0; i < pfields.size(); i++) {
      Types.NestedField pf = pfields.get(i);
      Object v = f.partition().get(i, Object.class);
      Map<String, Object> pv = new LinkedHashMap<>();
      pv.put("name", pf.name());
      pv.put("field_id", pf.fieldId());
      pv.put("type", pf.type().toString());
      pv.put("value", v == null ? "null" : SingleValueParser.toJson(pf.type(), v));
      partition.add(pv);
    }
    m.put("partition", partition);
    m.put("record_count", f.recordCount());
    m.put("file_size_in_bytes", f.fileSizeInBytes());
    m.put("column_sizes", copy(f.columnSizes()));
    m.put("value_counts", copy(f.valueCounts()));
    m.put("null_value_counts", copy(f.nullValueCounts()));
    m.put("nan_value_counts", copy(f.nanValueCounts()));
    m.put("lower_bounds", copy(f.lowerBounds()));
    m.put("upper_bounds", copy(f.upperBounds()));
    m.put("key_metadata", hex(f.keyMetadata()));
    m.put("split_offsets", copy(f.splitOffsets()));
    m.put("equality_ids", copy(f.equalityFieldIds()));
    m.put("sort_order_id", f.sortOrderId());
    m.put("first_row_id", f.firstRowId());
    if (f instanceof DeleteFile) {
      DeleteFile d = (DeleteFile) f;
      m.put("referenced_data_file", d.referencedDataFile() == null ? null : d.referencedDataFile().toString());
      m.put("content_offset", d.contentOffset());
      m.put("content_size_in_bytes", d.contentSizeInBytes());
    } else {
      m.put("referenced_data_file", null);
      m.put("content_offset", null);
      m.put("content_size_in_bytes", null);
    }
    return m;
  }

  // -------------------------------------------------------------------------------------------
  // Deletion vectors
  // -------------------------------------------------------------------------------------------

  /**
   * Reads DV blobs. One request per line: {@code path \t offset \t length \t referenced_data_file
   * \t cardinality}; the bytes at (offset, length) are read directly (as a reader with only the
   * manifest entry would) and deserialised with {@code PositionDeleteIndex.deserialize}, which
   * checks the framing, CRC, cardinality and referenced file. Returns a JSON array of position
   * arrays (ascending), or {@code "!error: ..."} strings for blobs Java rejects.
   */
  public static String readDVPositionsJson(String requests) {
    List<Object> out = new ArrayList<>();
    for (String line : requests.split("\n")) {
      if (line.isEmpty()) continue;
      String[] p = line.split("\t", -1);
      String path = p[0];
      long offset = Long.parseLong(p[1]);
      int length = Integer.parseInt(p[2]);
      try {
        byte[] bytes = new byte[length];
        try (RandomAccessFile raf = new RandomAccessFile(localPath(path), "r")) {
          raf.seek(offset);
          raf.readFully(bytes);
        }
        DeleteFile dv =
            FileMetadata.deleteFileBuilder(PartitionSpec.unpartitioned())
                .ofPositionDeletes()
                .withFormat(FileFormat.PUFFIN)
                .withPath(path)
                .withFileSizeInBytes(new java.io.File(localPath(path)).length())
                .withRecordCount(Long.parseLong(p[4]))
                .withReferencedDataFile(p[3])
                .withContentOffset(offset)
                .withContentSizeInBytes(length)
                .build();
        PositionDeleteIndex index = PositionDeleteIndex.deserialize(bytes, dv);
        List<Object> positions = new ArrayList<>();
        index.forEach(positions::add);
        out.add(positions);
      } catch (Exception e) {
        out.add(("!error: " + e).replace('\n', ' '));
      }
    }
    return json(out);
  }

  /** The blobs in a Puffin file's footer as Java's Puffin reader sees them (JSON array). */
  public static String puffinBlobsJson(String path) throws IOException {
    List<Object> out = new ArrayList<>();
    try (PuffinReader reader = Puffin.read(io().newInputFile(path)).build()) {
      for (BlobMetadata b : reader.fileMetadata().blobs()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", b.type());
        m.put("fields", b.inputFields());
        m.put("snapshot_id", b.snapshotId());
        m.put("sequence_number", b.sequenceNumber());
        m.put("offset", b.offset());
        m.put("length", b.length());
        m.put("compression_codec", b.compressionCodec());
        m.put("properties", new TreeMap<>(b.properties()));
        out.add(m);
      }
    }
    return json(out);
  }

  /**
   * Writes DVs with Java's {@code BaseDVFileWriter} into one new Puffin file at {@code path}.
   * Input: one data file per line, {@code referenced_data_file \t pos,pos,...}. Returns the
   * delete files Java produced: JSON array of {referenced_data_file, offset, length, cardinality,
   * file_size_in_bytes}.
   */
  public static String writeDVsJson(String path, String lines) throws IOException {
    FileIO io = io();
    OutputFile output = io.newOutputFile(path);
    BaseDVFileWriter writer = new BaseDVFileWriter(() -> output, dataFile -> null);
    PartitionSpec spec = PartitionSpec.unpartitioned();
    try {
      for (String line : lines.split("\n")) {
        if (line.isEmpty()) continue;
        String[] p = line.split("\t", -1);
        for (String pos : p[1].split(",")) {
          if (!pos.isEmpty()) writer.delete(p[0], Long.parseLong(pos), spec, null);
        }
      }
    } finally {
      writer.close();
    }
    DeleteWriteResult result = writer.result();
    List<Object> out = new ArrayList<>();
    for (DeleteFile d : result.deleteFiles()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("referenced_data_file", d.referencedDataFile());
      m.put("offset", d.contentOffset());
      m.put("length", d.contentSizeInBytes());
      m.put("cardinality", d.recordCount());
      m.put("file_size_in_bytes", d.fileSizeInBytes());
      out.add(m);
    }
    return json(out);
  }

  private static String localPath(String path) {
    return path.startsWith("file:") ? java.net.URI.create(path).getPath() : path;
  }

  // -------------------------------------------------------------------------------------------
  // Tables built through the Java API (no data files: manifests only reference paths)
  // -------------------------------------------------------------------------------------------

  private static final Schema API_SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "name", Types.StringType.get()),
          Types.NestedField.optional(3, "ts", Types.TimestampType.withZone()),
          Types.NestedField.optional(4, "price", Types.DecimalType.of(9, 2)),
          Types.NestedField.optional(5, "score", Types.DoubleType.get()),
          Types.NestedField.optional(6, "d", Types.DateType.get()),
          Types.NestedField.optional(7, "flag", Types.BooleanType.get()),
          Types.NestedField.optional(8, "blob", Types.BinaryType.get()),
          Types.NestedField.optional(9, "u", Types.UUIDType.get()));

  /**
   * Creates tables through the Java API in {@code catalog} (namespace {@code namespace}) and returns
   * JSON {name: metadata file location}. Each table has several snapshots: fast appends, a merge
   * append (EXISTING entries), an overwrite and a delete (DELETED entries), row deltas with
   * position deletes (referenced_data_file) and equality deletes (v2) or deletion vectors written
   * by {@code BaseDVFileWriter} (v3), partition evolution to a second spec, and tables upgraded in
   * place at the spec change: api_upgraded from v2 to v3, api_v1_to_v2 and api_v1_to_v3 from v1
   * (their v1 manifests stay in the newer table, read with the permissive rules).
   */
  public static String buildApiTables(org.apache.iceberg.catalog.Catalog catalog, String namespace)
      throws IOException {
    Map<String, Object> out = new LinkedHashMap<>();
    String[] names = {"api_v1", "api_v2", "api_v3", "api_upgraded", "api_v1_to_v2", "api_v1_to_v3"};
    int[] versions = {1, 2, 3, 2, 1, 1};
    int[] upgradesTo = {0, 0, 0, 3, 2, 3}; // 0: not upgraded
    for (int t = 0; t < names.length; t++) {
      String name = names[t];
      int version = versions[t];
      int upgradeTo = upgradesTo[t];
      PartitionSpec spec0 =
          PartitionSpec.builderFor(API_SCHEMA).bucket("id", 4).day("ts").identity("price").build();
      Map<String, String> props = new LinkedHashMap<>();
      props.put(TableProperties.FORMAT_VERSION, Integer.toString(version));
      props.put(TableProperties.MANIFEST_MIN_MERGE_COUNT, "3");
      SortOrder order = SortOrder.builderFor(API_SCHEMA).asc("id").desc("name").build();
      Table table =
          catalog
              .buildTable(org.apache.iceberg.catalog.TableIdentifier.of(namespace, name), API_SCHEMA)
              .withPartitionSpec(spec0)
              .withSortOrder(order)
              .withProperties(props)
              .create();
      buildHistory(table, upgradeTo);
      out.put(name, ((HasTableOperations) table).operations().current().metadataFileLocation());
    }
    return json(out);
  }

  /** {@code upgradeTo}: the format version the table is upgraded to at the spec change (0: none). */
  private static void buildHistory(Table table, int upgradeTo) throws IOException {
    int version = ((HasTableOperations) table).operations().current().formatVersion();
    PartitionSpec spec0 = table.spec();
    String dataDir = table.location() + "/data/";
    DataFile a = dataFile(table, spec0, dataDir + "a.parquet", 0, 100, true);
    DataFile b = dataFile(table, spec0, dataDir + "b.parquet", 1, 250, false);
    DataFile c = dataFile(table, spec0, dataDir + "c.parquet", 2, 7, true);
    table.newFastAppend().appendFile(a).appendFile(b).commit();
    table.newFastAppend().appendFile(c).commit();
    // merge append: with min-count-to-merge 3, the three manifests are merged into one, so the
    // new manifest has ADDED and EXISTING entries
    DataFile d = dataFile(table, spec0, dataDir + "d.parquet", 3, 42, false);
    table.newAppend().appendFile(d).commit();
    // overwrite: replaces a (DELETED entry) with e
    DataFile e = dataFile(table, spec0, dataDir + "e.parquet", 4, 90, true);
    table.newOverwrite().deleteFile(a).addFile(e).commit();
    if (version >= 2) {
      DeleteFile pos =
          FileMetadata.deleteFileBuilder(spec0)
              .ofPositionDeletes()
              .withPath(dataDir + "pos-deletes-b.parquet")
              .withFormat(FileFormat.PARQUET)
              .withPartition(b.partition())
              .withFileSizeInBytes(512)
              .withRecordCount(3)
              .withReferencedDataFile(b.location())
              .withMetrics(
                  new Metrics(
                      3L,
                      map(2147483546, 40L, 2147483545, 12L),
                      map(2147483546, 3L, 2147483545, 3L),
                      map(2147483546, 0L, 2147483545, 0L),
                      null,
                      bounds(2147483546, Types.StringType.get(), b.location(), 2147483545, Types.LongType.get(), 5L),
                      bounds(2147483546, Types.StringType.get(), b.location(), 2147483545, Types.LongType.get(), 77L)))
              .build();
      DeleteFile eq =
          FileMetadata.deleteFileBuilder(spec0)
              .ofEqualityDeletes(1, 2)
              .withPath(dataDir + "eq-deletes.avro")
              .withFormat(FileFormat.AVRO)
              .withPartition(c.partition())
              .withFileSizeInBytes(300)
              .withRecordCount(2)
              .withSortOrder(table.sortOrder())
              .withMetrics(
                  new Metrics(
                      2L,
                      null,
                      map(1, 2L, 2, 2L),
                      map(1, 0L, 2, 1L),
                      null,
                      bounds(1, Types.LongType.get(), 10L, 2, Types.StringType.get(), "k"),
                      bounds(1, Types.LongType.get(), 20L, 2, Types.StringType.get(), "kz")))
              .build();
      if (version == 2) {
        table.newRowDelta().addDeletes(pos).addDeletes(eq).commit();
      } else {
        DeleteFile dv1 = writeDV(table, b, new long[] {0, 5, 77});
        table.newRowDelta().addDeletes(dv1).addDeletes(eq).commit();
        // a second DV for b replaces the first (the old one becomes a DELETED delete entry); one
        // Puffin file with DVs for b and e
        DeleteFile[] dvs = writeDVs(table, new DataFile[] {b, e},
            new long[][] {{0, 5, 77, 100, 249}, {1L, 65535L, 65536L, 89L}});
        table
            .newRowDelta()
            .validateFromSnapshot(table.currentSnapshot().snapshotId())
            .removeDeletes(dv1)
            .addDeletes(dvs[0])
            .addDeletes(dvs[1])
            .commit();
      }
    }
    // delete a whole file (DELETED entry)
    table.newDelete().deleteFile(c).commit();
    // partition evolution: a second spec, and files written with it
    table.updateSpec().removeField("price").addField("name").addField(Expressions.truncate("blob", 2)).commit();
    if (upgradeTo > 0) {
      table.updateProperties().set(TableProperties.FORMAT_VERSION, Integer.toString(upgradeTo)).commit();
    }
    PartitionSpec spec1 = table.spec();
    DataFile f = dataFile(table, spec1, dataDir + "f.parquet", 5, 1000, false);
    DataFile g = dataFile(table, spec1, dataDir + "g.orc", 6, 1, true);
    table.newFastAppend().appendFile(f).appendFile(g).commit();
    int finalVersion = ((HasTableOperations) table).operations().current().formatVersion();
    if (finalVersion >= 3) {
      DeleteFile dv = writeDV(table, f, new long[] {3, 999, 5_000_000_000L});
      table.newRowDelta().addDeletes(dv).commit();
    } else if (finalVersion == 2) {
      DeleteFile pos2 =
          FileMetadata.deleteFileBuilder(spec1)
              .ofPositionDeletes()
              .withPath(dataDir + "pos-deletes-f.parquet")
              .withFormat(FileFormat.PARQUET)
              .withPartition(f.partition())
              .withFileSizeInBytes(400)
              .withRecordCount(1)
              .withReferencedDataFile(f.location())
              .build();
      table.newRowDelta().addDeletes(pos2).commit();
    }
    // a last merge append across both specs
    DataFile h = dataFile(table, spec1, dataDir + "h.parquet", 7, 12, false);
    table.newAppend().appendFile(h).commit();
  }

  private static DeleteFile writeDV(Table table, DataFile file, long[] positions) throws IOException {
    return writeDVs(table, new DataFile[] {file}, new long[][] {positions})[0];
  }

  private static DeleteFile[] writeDVs(Table table, DataFile[] files, long[][] positions) throws IOException {
    String path = table.location() + "/data/dv-" + UUID.randomUUID() + ".puffin";
    OutputFile output = table.io().newOutputFile(path);
    BaseDVFileWriter writer = new BaseDVFileWriter(() -> output, dataFile -> null);
    try {
      for (int i = 0; i < files.length; i++) {
        PartitionSpec spec = table.specs().get(files[i].specId());
        for (long p : positions[i]) writer.delete(files[i].location(), p, spec, files[i].partition());
      }
    } finally {
      writer.close();
    }
    List<DeleteFile> written = writer.result().deleteFiles();
    DeleteFile[] out = new DeleteFile[files.length];
    for (int i = 0; i < files.length; i++) {
      for (DeleteFile dv : written) {
        if (dv.referencedDataFile().equals(files[i].location())) out[i] = dv;
      }
    }
    return out;
  }

  /** A data file with full metrics; {@code n} varies the values, {@code nulls} leaves some stats out. */
  private static DataFile dataFile(Table table, PartitionSpec spec, String path, int n, long rows, boolean nulls) {
    PartitionData partition = new PartitionData(spec.partitionType());
    List<PartitionField> fields = spec.fields();
    for (int i = 0; i < fields.size(); i++) {
      String t = fields.get(i).transform().toString();
      Type type = spec.partitionType().fields().get(i).type();
      Object v;
      if (t.equals("void") || (nulls && i == fields.size() - 1)) {
        v = null;
      } else if (t.startsWith("bucket")) {
        v = n % 4;
      } else if (t.equals("day")) {
        v = 19_000 + n * 40 - 20_000 * (n % 2); // includes pre-epoch days
      } else if (t.equals("month")) {
        v = 600 + n;
      } else if (type.typeId() == Type.TypeID.DECIMAL) {
        v = new BigDecimal(n * 137 - 300).movePointLeft(2);
      } else if (type.typeId() == Type.TypeID.BINARY) {
        v = ByteBuffer.wrap(new byte[] {(byte) n, (byte) 0xfe});
      } else if (type.typeId() == Type.TypeID.STRING) {
        v = n % 3 == 0 ? "" : "nåme-" + n;
      } else {
        throw new IllegalArgumentException("no value for partition field " + fields.get(i));
      }
      partition.set(i, v);
    }
    Map<Integer, ByteBuffer> lower = new LinkedHashMap<>();
    Map<Integer, ByteBuffer> upper = new LinkedHashMap<>();
    lower.put(1, Conversions.toByteBuffer(Types.LongType.get(), -5L * n));
    upper.put(1, Conversions.toByteBuffer(Types.LongType.get(), 1_000_000_000_000L + n));
    lower.put(2, Conversions.toByteBuffer(Types.StringType.get(), "a" + n));
    upper.put(2, Conversions.toByteBuffer(Types.StringType.get(), "zé" + n));
    lower.put(3, Conversions.toByteBuffer(Types.TimestampType.withZone(), -1L));
    upper.put(3, Conversions.toByteBuffer(Types.TimestampType.withZone(), 1_700_000_000_000_000L));
    lower.put(4, Conversions.toByteBuffer(Types.DecimalType.of(9, 2), new BigDecimal("-12.50")));
    upper.put(4, Conversions.toByteBuffer(Types.DecimalType.of(9, 2), new BigDecimal("9999999.99")));
    lower.put(5, Conversions.toByteBuffer(Types.DoubleType.get(), -0.0));
    upper.put(5, Conversions.toByteBuffer(Types.DoubleType.get(), Double.MAX_VALUE));
    lower.put(6, Conversions.toByteBuffer(Types.DateType.get(), -719162));
    upper.put(6, Conversions.toByteBuffer(Types.DateType.get(), 2932896));
    lower.put(7, Conversions.toByteBuffer(Types.BooleanType.get(), false));
    upper.put(7, Conversions.toByteBuffer(Types.BooleanType.get(), true));
    lower.put(8, ByteBuffer.wrap(new byte[] {}));
    upper.put(8, ByteBuffer.wrap(new byte[] {(byte) 0xff, 0, 1}));
    lower.put(9, Conversions.toByteBuffer(Types.UUIDType.get(), new UUID(0L, n)));
    upper.put(9, Conversions.toByteBuffer(Types.UUIDType.get(), new UUID(-1L, -1L)));
    Map<Integer, Long> sizes = new LinkedHashMap<>();
    Map<Integer, Long> values = new LinkedHashMap<>();
    Map<Integer, Long> nullCounts = new LinkedHashMap<>();
    for (int id = 1; id <= 9; id++) {
      sizes.put(id, 10L * id + n);
      values.put(id, rows);
      nullCounts.put(id, id == 1 ? 0L : (long) (id + n) % 3);
    }
    Map<Integer, Long> nanCounts = nulls ? null : map(5, (long) n);
    Metrics metrics = new Metrics(rows, sizes, values, nullCounts, nanCounts, lower, upper);
    DataFiles.Builder builder =
        DataFiles.builder(spec)
            .withPath(path)
            .withFormat(path.endsWith(".orc") ? FileFormat.ORC : FileFormat.PARQUET)
            .withPartition(partition)
            .withFileSizeInBytes(10_000L + n)
            .withMetrics(metrics)
            .withSplitOffsets(nulls ? null : Arrays.asList(4L, 4000L + n))
            .withSortOrder(nulls ? SortOrder.unsorted() : table.sortOrder());
    if (n % 2 == 1) builder.withEncryptionKeyMetadata(ByteBuffer.wrap(new byte[] {1, 2, 3, (byte) n}));
    return builder.build();
  }

  private static Map<Integer, Long> map(int k1, long v1) {
    Map<Integer, Long> m = new LinkedHashMap<>();
    m.put(k1, v1);
    return m;
  }

  private static Map<Integer, Long> map(int k1, long v1, int k2, long v2) {
    Map<Integer, Long> m = map(k1, v1);
    m.put(k2, v2);
    return m;
  }

  private static Map<Integer, ByteBuffer> bounds(int k1, Type t1, Object v1, int k2, Type t2, Object v2) {
    Map<Integer, ByteBuffer> m = new LinkedHashMap<>();
    m.put(k1, Conversions.toByteBuffer(t1, v1));
    m.put(k2, Conversions.toByteBuffer(t2, v2));
    return m;
  }

  // -------------------------------------------------------------------------------------------
  // A tiny JSON serialiser for maps, lists, strings, numbers, booleans, null and bytes (hex)
  // -------------------------------------------------------------------------------------------

  static String json(Object value) {
    StringBuilder sb = new StringBuilder();
    write(sb, value);
    return sb.toString();
  }

  private static void write(StringBuilder sb, Object v) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof Map) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
        if (!first) sb.append(',');
        first = false;
        writeString(sb, String.valueOf(e.getKey()));
        sb.append(':');
        write(sb, e.getValue());
      }
      sb.append('}');
    } else if (v instanceof Iterable) {
      sb.append('[');
      boolean first = true;
      for (Object o : (Iterable<?>) v) {
        if (!first) sb.append(',');
        first = false;
        write(sb, o);
      }
      sb.append(']');
    } else if (v instanceof ByteBuffer) {
      writeString(sb, hex((ByteBuffer) v));
    } else if (v instanceof Number || v instanceof Boolean) {
      sb.append(v);
    } else {
      writeString(sb, v.toString());
    }
  }

  private static void writeString(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (ch == '"' || ch == '\\') {
        sb.append('\\').append(ch);
      } else if (ch < 0x20 || ch > 0x7e) {
        sb.append(String.format("\\u%04x", (int) ch));
      } else {
        sb.append(ch);
      }
    }
    sb.append('"');
  }
}
