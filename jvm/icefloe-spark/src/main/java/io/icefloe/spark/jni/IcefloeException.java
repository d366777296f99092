package io.icefloe.spark.jni;

/** An error of icefloe's Rust core (or a panic in it), with the core error's message. */
public class IcefloeException extends RuntimeException {
  public IcefloeException(String message) {
    super(message);
  }
}
