package io.icefloe.spark.jni;

/** The Rust core's {@code ValidationFailed} error: a row-level change conflicts with a concurrent commit (not retried, as Java's ValidationException). */
public class IcefloeValidationException extends IcefloeException {
  public IcefloeValidationException(String message) {
    super(message);
  }
}
