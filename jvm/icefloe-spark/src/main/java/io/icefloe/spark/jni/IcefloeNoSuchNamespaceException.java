package io.icefloe.spark.jni;

/** The Rust core's {@code NoSuchNamespace} error (thrown by the native methods). */
public class IcefloeNoSuchNamespaceException extends IcefloeException {
  public IcefloeNoSuchNamespaceException(String message) {
    super(message);
  }
}
