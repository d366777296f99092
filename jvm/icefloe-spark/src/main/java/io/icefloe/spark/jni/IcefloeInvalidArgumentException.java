package io.icefloe.spark.jni;

/** The Rust core's {@code InvalidArgument} error (thrown by the native methods). */
public class IcefloeInvalidArgumentException extends IcefloeException {
  public IcefloeInvalidArgumentException(String message) {
    super(message);
  }
}
