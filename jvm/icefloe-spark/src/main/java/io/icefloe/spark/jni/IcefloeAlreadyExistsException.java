package io.icefloe.spark.jni;

/** The Rust core's {@code AlreadyExists} error (thrown by the native methods). */
public class IcefloeAlreadyExistsException extends IcefloeException {
  public IcefloeAlreadyExistsException(String message) {
    super(message);
  }
}
