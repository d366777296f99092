package io.icefloe.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The advisory shuffle partition size a write asks of Spark, as Java's SparkWriteConf: the
 * write option {@code advisory-partition-size}, else the session's {@code
 * spark.sql.iceberg.advisory-partition-size}, else the table's {@code
 * write.spark.advisory-partition-size-bytes}, else the expected file size (128 MB for data, 32
 * MB for deletes) times how much the shuffled rows shrink once written (Java's
 * SparkCompressionUtil estimates by shuffle and file codec), at least Spark's {@code
 * spark.sql.adaptive.advisoryPartitionSizeInBytes}. Without it Spark's own size (64 MB by
 * default) cut a write into several times more, smaller files than Java's.
 */
final class AdvisorySize {
  private static final long DATA_FILE_SIZE = 128L * 1024 * 1024;
  private static final long DELETE_FILE_SIZE = 32L * 1024 * 1024;

  // Java's estimates of shuffle bytes per written byte, by (shuffle codec, file codec)
  private static final Map<String, Double> COLUMNAR =
      Map.ofEntries(
          Map.entry("none/zstd", 4.0),
          Map.entry("none/gzip", 4.0),
          Map.entry("none/zlib", 4.0),
          Map.entry("none/snappy", 3.0),
          Map.entry("none/lz4", 3.0),
          Map.entry("zstd/zstd", 2.0),
          Map.entry("zstd/gzip", 2.0),
          Map.entry("zstd/zlib", 2.0),
          Map.entry("zstd/snappy", 1.5),
          Map.entry("zstd/lz4", 1.5),
          Map.entry("snappy/zstd", 3.0),
          Map.entry("snappy/gzip", 3.0),
          Map.entry("snappy/zlib", 3.0),
          Map.entry("snappy/snappy", 2.0),
          Map.entry("snappy/lz4", 2.0),
          Map.entry("lz4/zstd", 3.0),
          Map.entry("lz4/gzip", 3.0),
          Map.entry("lz4/zlib", 3.0),
          Map.entry("lz4/snappy", 2.0),
          Map.entry("lz4/lz4", 2.0));
  private static final double COLUMNAR_DEFAULT = 2.0;
  private static final Map<String, Double> ROW_BASED =
      Map.ofEntries(
          Map.entry("none/zstd", 2.0),
          Map.entry("none/gzip", 2.0),
          Map.entry("none/zlib", 2.0),
          Map.entry("zstd/snappy", 0.5),
          Map.entry("zstd/lz4", 0.5),
          Map.entry("snappy/zstd", 1.5),
          Map.entry("snappy/gzip", 1.5),
          Map.entry("snappy/zlib", 1.5),
          Map.entry("lz4/zstd", 1.5),
          Map.entry("lz4/gzip", 1.5),
          Map.entry("lz4/zlib", 1.5));
  private static final double ROW_BASED_DEFAULT = 1.0;

  private AdvisorySize() {}

  /** For data files. */
  static long data(JsonNode info, CaseInsensitiveStringMap options) {
    String format = dataFormat(info, options);
    return configured(info, options, DATA_FILE_SIZE, format, dataCodec(info, options, format));
  }

  /** For delete files: DVs in Puffin from v3, else the delete (or data) file format. */
  static long deletes(JsonNode info, CaseInsensitiveStringMap options) {
    String format;
    if (info.path("format-version").asInt() >= 3) {
      format = "puffin";
    } else {
      format = options.get("delete-format");
      if (format == null) {
        format = property(info, "write.delete.format.default");
      }
      if (format == null) {
        format = dataFormat(info, options);
      }
      format = format.toLowerCase(Locale.ROOT);
    }
    String codec = null;
    if (!format.equals("puffin")) {
      codec = codec(options, info, "write.delete." + format + ".compression-codec");
      if (codec == null) {
        codec = dataCodec(info, options, format);
      }
    }
    return configured(info, options, DELETE_FILE_SIZE, format, codec);
  }

  private static long configured(
      JsonNode info, CaseInsensitiveStringMap options, long fileSize, String format, String codec) {
    String value = options.get("advisory-partition-size");
    if (value == null) {
      value = SQLConf.get().getConfString("spark.sql.iceberg.advisory-partition-size", null);
    }
    if (value == null) {
      value = property(info, "write.spark.advisory-partition-size-bytes");
    }
    if (value != null) {
      return Long.parseLong(value.trim());
    }
    long suggested = (long) (fileSize * ratio(format, codec));
    long spark = (Long) SQLConf.get().getConf(SQLConf.ADVISORY_PARTITION_SIZE_IN_BYTES());
    return Math.max(suggested, spark);
  }

  private static String property(JsonNode info, String key) {
    JsonNode v = info.path("properties").get(key);
    return v == null || v.isNull() ? null : v.asText();
  }

  private static String dataFormat(JsonNode info, CaseInsensitiveStringMap options) {
    String format = options.get("write-format");
    if (format == null) {
      format = property(info, "write.format.default");
    }
    return format == null ? "parquet" : format.toLowerCase(Locale.ROOT);
  }

  /** The write option, the session's codec, then the table's property (null: none set). */
  private static String codec(CaseInsensitiveStringMap options, JsonNode info, String tableProperty) {
    String codec = options.get("compression-codec");
    if (codec == null) {
      codec = SQLConf.get().getConfString("spark.sql.iceberg.compression-codec", null);
    }
    return codec != null ? codec : property(info, tableProperty);
  }

  private static String dataCodec(JsonNode info, CaseInsensitiveStringMap options, String format) {
    String codec = codec(options, info, "write." + format + ".compression-codec");
    if (codec != null) {
      return codec;
    }
    switch (format) {
      case "parquet":
        return "zstd";
      case "avro":
        return "gzip";
      case "orc":
        return "zlib";
      default:
        return null;
    }
  }

  private static double ratio(String format, String codec) {
    boolean columnar = format.equals("parquet") || format.equals("orc");
    if (!columnar && !format.equals("avro")) {
      return 1.0;
    }
    SparkConf conf = SparkSession.active().sparkContext().getConf();
    String shuffle =
        conf.getBoolean("spark.shuffle.compress", true) ? conf.get("spark.io.compression.codec", "lz4") : "none";
    String key = shuffle.toLowerCase(Locale.ROOT) + "/" + (codec == null ? "null" : codec.toLowerCase(Locale.ROOT));
    return columnar
        ? COLUMNAR.getOrDefault(key, COLUMNAR_DEFAULT)
        : ROW_BASED.getOrDefault(key, ROW_BASED_DEFAULT);
  }
}
