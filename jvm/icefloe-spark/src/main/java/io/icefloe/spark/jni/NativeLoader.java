package io.icefloe.spark.jni;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads icefloe's native library (crates/icefloe-jni) once per class loader: from the path
 * in the system property {@code icefloe.native.library} (or the environment variable
 * {@code ICEFLOE_NATIVE_LIBRARY}) when set, else from inside this jar
 * ({@code io/icefloe/native/<os>-<arch>/}), copied to a temporary file first because a JVM
 * loads libraries from files only. A fresh file per load: a JVM refuses to load one file into
 * two class loaders, and Spark may load this jar in more than one.
 */
final class NativeLoader {
  static final String PROPERTY = "icefloe.native.library";
  static final String ENV = "ICEFLOE_NATIVE_LIBRARY";
  private static boolean loaded = false;

  private NativeLoader() {}

  static synchronized void load() {
    if (loaded) {
      return;
    }
    String path = System.getProperty(PROPERTY);
    if (path == null || path.isEmpty()) {
      path = System.getenv(ENV);
    }
    if (path != null && !path.isEmpty()) {
      System.load(path);
      loaded = true;
      return;
    }
    String resource = "/io/icefloe/native/" + platform() + "/" + System.mapLibraryName("icefloe_jni");
    try (InputStream in = NativeLoader.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new UnsatisfiedLinkError(
            "icefloe's native library is not in the jar for this platform (" + resource
                + "); set -D" + PROPERTY + "=/path/to/libicefloe_jni.so");
      }
      Path file = Files.createTempFile("icefloe_jni", System.mapLibraryName(""));
      file.toFile().deleteOnExit();
      Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
      System.load(file.toString());
      loaded = true;
    } catch (IOException e) {
      UnsatisfiedLinkError error =
          new UnsatisfiedLinkError("could not extract icefloe's native library: " + e.getMessage());
      error.initCause(e);
      throw error;
    }
  }

  /** {@code linux-x86_64}, {@code linux-aarch64}, {@code darwin-aarch64}, ... */
  static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    String osName = os.startsWith("mac") || os.startsWith("darwin") ? "darwin" : os.split(" ")[0];
    String archName =
        arch.equals("amd64") || arch.equals("x86_64") ? "x86_64"
            : arch.equals("arm64") || arch.equals("aarch64") ? "aarch64" : arch;
    return osName + "-" + archName;
  }
}
