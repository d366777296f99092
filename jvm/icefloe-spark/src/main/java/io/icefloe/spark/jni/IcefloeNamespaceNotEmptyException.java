package io.icefloe.spark.jni;

/** The Rust core's {@code NamespaceNotEmpty} error (thrown by the native methods). */
public class IcefloeNamespaceNotEmptyException extends IcefloeException {
  public IcefloeNamespaceNotEmptyException(String message) {
    super(message);
  }
}
