package io.icefloe.spark.jni;

/** The Rust core's {@code Unsupported} error (thrown by the native methods). */
public class IcefloeUnsupportedException extends IcefloeException {
  public IcefloeUnsupportedException(String message) {
    super(message);
  }
}
