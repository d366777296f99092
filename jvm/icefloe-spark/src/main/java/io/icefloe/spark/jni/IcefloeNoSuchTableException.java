package io.icefloe.spark.jni;

/** The Rust core's {@code NoSuchTable} error (thrown by the native methods). */
public class IcefloeNoSuchTableException extends IcefloeException {
  public IcefloeNoSuchTableException(String message) {
    super(message);
  }
}
