package io.icefloe.spark;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Arrays;
import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.NoSuchFunctionException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.functions.BoundFunction;
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * Iceberg's partition transforms as Spark functions ({@code years}, {@code months}, {@code days},
 * {@code hours}, {@code bucket}, {@code truncate}), which icefloe's SparkCatalog serves as a
 * FunctionCatalog (namespace {@code system} or none), as Java's SparkCatalog serves its own. Spark
 * needs them to evaluate a write's requested clustering by partition ({@link WriteRequirements}):
 * the values are the spec's (Appendix A's bucket hash, the truncate and date/time transforms), so
 * that the rows of one partition meet in one task, as they do for Java's writes.
 */
final class TransformFunctions {
  private TransformFunctions() {}

  static final String[] NAMES = {"years", "months", "days", "hours", "bucket", "truncate"};

  static boolean isNamespace(String[] namespace) {
    return namespace.length == 0 || (namespace.length == 1 && namespace[0].equalsIgnoreCase("system"));
  }

  static UnboundFunction load(Identifier ident) throws NoSuchFunctionException {
    if (isNamespace(ident.namespace())) {
      for (String name : NAMES) {
        if (name.equalsIgnoreCase(ident.name())) {
          return new Unbound(name);
        }
      }
    }
    throw new NoSuchFunctionException(ident);
  }

  /** Whether the transform's function takes a column of this Spark type. */
  static boolean accepts(String name, DataType t) {
    switch (name) {
      case "years":
      case "months":
      case "days":
        return t instanceof DateType || t instanceof TimestampType || t instanceof TimestampNTZType;
      case "hours":
        return t instanceof TimestampType || t instanceof TimestampNTZType;
      case "bucket":
        return t instanceof IntegerType
            || t instanceof LongType
            || t instanceof DateType
            || t instanceof TimestampType
            || t instanceof TimestampNTZType
            || t instanceof DecimalType
            || t instanceof StringType
            || t instanceof BinaryType;
      case "truncate":
        return t instanceof IntegerType
            || t instanceof LongType
            || t instanceof DecimalType
            || t instanceof StringType
            || t instanceof BinaryType;
      default:
        return false;
    }
  }

  private static final class Unbound implements UnboundFunction {
    private final String name;

    Unbound(String name) {
      this.name = name;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public String description() {
      return "Iceberg's " + name + " partition transform";
    }

    @Override
    public BoundFunction bind(StructType input) {
      StructField[] fields = input.fields();
      boolean withWidth = name.equals("bucket") || name.equals("truncate");
      int expected = withWidth ? 2 : 1;
      if (fields.length != expected) {
        throw new UnsupportedOperationException(
            name + " takes " + (withWidth ? "a width and a column" : "one column") + ", not " + input.simpleString());
      }
      DataType value = fields[expected - 1].dataType();
      if (withWidth && !(fields[0].dataType() instanceof IntegerType)) {
        throw new UnsupportedOperationException(name + ": the width must be an int literal");
      }
      if (!accepts(name, value)) {
        throw new UnsupportedOperationException(name + " does not apply to " + value.simpleString());
      }
      return new Bound(name, value);
    }
  }

  private static final class Bound implements ScalarFunction<Object> {
    private static final long MICROS_PER_DAY = 86_400_000_000L;
    private static final long MICROS_PER_HOUR = 3_600_000_000L;
    private final String name;
    private final DataType input;

    Bound(String name, DataType input) {
      this.name = name;
      this.input = input;
    }

    @Override
    public DataType[] inputTypes() {
      return name.equals("bucket") || name.equals("truncate")
          ? new DataType[] {DataTypes.IntegerType, input}
          : new DataType[] {input};
    }

    @Override
    public DataType resultType() {
      switch (name) {
        case "days":
          return DataTypes.DateType;
        case "truncate":
          return input;
        default:
          return DataTypes.IntegerType;
      }
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public String canonicalName() {
      return "icefloe." + name + "(" + input.catalogString() + ")";
    }

    @Override
    public Object produceResult(InternalRow row) {
      int arg = inputTypes().length - 1;
      if (row.isNullAt(arg) || (arg == 1 && row.isNullAt(0))) {
        return null;
      }
      switch (name) {
        case "years":
          return input instanceof DateType
              ? LocalDate.ofEpochDay(row.getInt(0)).getYear() - 1970
              : utc(row.getLong(0)).getYear() - 1970;
        case "months":
          {
            int year;
            int month;
            if (input instanceof DateType) {
              LocalDate d = LocalDate.ofEpochDay(row.getInt(0));
              year = d.getYear();
              month = d.getMonthValue();
            } else {
              ZonedDateTime t = utc(row.getLong(0));
              year = t.getYear();
              month = t.getMonthValue();
            }
            return (year - 1970) * 12 + month - 1;
          }
        case "days":
          return input instanceof DateType ? row.getInt(0) : (int) Math.floorDiv(row.getLong(0), MICROS_PER_DAY);
        case "hours":
          return (int) Math.floorDiv(row.getLong(0), MICROS_PER_HOUR);
        case "bucket":
          return bucket(row.getInt(0), row);
        case "truncate":
          return truncate(row.getInt(0), row);
        default:
          throw new IllegalStateException("unknown transform " + name);
      }
    }

    /** A string argument (a UTF8String, read as an Object: the connector builds without spark-unsafe). */
    private String string(InternalRow row) {
      return String.valueOf(row.get(1, input));
    }

    private static ZonedDateTime utc(long micros) {
      return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L)).atZone(ZoneOffset.UTC);
    }

    /** The spec's bucket: the 32-bit Murmur3 hash of the value's bytes, mod the width. */
    private int bucket(int n, InternalRow row) {
      int hash;
      if (input instanceof IntegerType || input instanceof DateType) {
        hash = Murmur3.hashLong(row.getInt(1));
      } else if (input instanceof LongType || input instanceof TimestampType || input instanceof TimestampNTZType) {
        hash = Murmur3.hashLong(row.getLong(1));
      } else if (input instanceof DecimalType) {
        DecimalType d = (DecimalType) input;
        BigInteger unscaled = row.getDecimal(1, d.precision(), d.scale()).toJavaBigDecimal().unscaledValue();
        hash = Murmur3.hash(unscaled.toByteArray());
      } else if (input instanceof StringType) {
        hash = Murmur3.hash(string(row));
      } else {
        hash = Murmur3.hash(row.getBinary(1));
      }
      return (hash & Integer.MAX_VALUE) % n;
    }

    private Object truncate(int w, InternalRow row) {
      if (input instanceof IntegerType) {
        int v = row.getInt(1);
        return v - (((v % w) + w) % w);
      } else if (input instanceof LongType) {
        long v = row.getLong(1);
        return v - (((v % w) + w) % w);
      } else if (input instanceof DecimalType) {
        DecimalType d = (DecimalType) input;
        java.math.BigDecimal v = row.getDecimal(1, d.precision(), d.scale()).toJavaBigDecimal();
        BigInteger width = BigInteger.valueOf(w);
        BigInteger unscaled = v.unscaledValue();
        BigInteger truncated = unscaled.subtract(unscaled.mod(width));
        return Decimal.apply(new java.math.BigDecimal(truncated, v.scale()), d.precision(), d.scale());
      } else if (input instanceof StringType) {
        // the first w code points (Spark's strings are UTF-8)
        String s = string(row);
        if (s.codePointCount(0, s.length()) <= w) {
          return row.get(1, input);
        }
        return CatalystTypeConverters.convertToCatalyst(s.substring(0, s.offsetByCodePoints(0, w)));
      } else {
        byte[] b = row.getBinary(1);
        return b.length <= w ? b : Arrays.copyOf(b, w);
      }
    }
  }

  /** The 32-bit x86 variant of MurmurHash3 with seed 0, the hash of the spec's bucket transform. */
  static final class Murmur3 {
    private static final int C1 = 0xcc9e2d51;
    private static final int C2 = 0x1b873593;

    private Murmur3() {}

    static int hashLong(long v) {
      byte[] b = new byte[8];
      for (int i = 0; i < 8; i++) {
        b[i] = (byte) (v >>> (8 * i)); // little-endian, as the spec hashes longs
      }
      return hash(b);
    }

    static int hash(String s) {
      return hash(s.getBytes(StandardCharsets.UTF_8));
    }

    static int hash(byte[] data) {
      int h = 0;
      int blocks = data.length / 4;
      for (int i = 0; i < blocks; i++) {
        int j = i * 4;
        int k =
            (data[j] & 0xff)
                | ((data[j + 1] & 0xff) << 8)
                | ((data[j + 2] & 0xff) << 16)
                | ((data[j + 3] & 0xff) << 24);
        h ^= mixK(k);
        h = Integer.rotateLeft(h, 13) * 5 + 0xe6546b64;
      }
      int tail = blocks * 4;
      int k = 0;
      switch (data.length & 3) {
        case 3:
          k ^= (data[tail + 2] & 0xff) << 16;
          // fall through
        case 2:
          k ^= (data[tail + 1] & 0xff) << 8;
          // fall through
        case 1:
          k ^= data[tail] & 0xff;
          h ^= mixK(k);
          break;
        default:
          break;
      }
      h ^= data.length;
      h ^= h >>> 16;
      h *= 0x85ebca6b;
      h ^= h >>> 13;
      h *= 0xc2b2ae35;
      h ^= h >>> 16;
      return h;
    }

    private static int mixK(int k) {
      k *= C1;
      k = Integer.rotateLeft(k, 15);
      return k * C2;
    }
  }
}
