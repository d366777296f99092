package io.icefloe.spark.jni;

/** The Rust core's {@code CommitStateUnknown} error: the commit's outcome is unknown; its files are kept. */
public class IcefloeCommitStateUnknownException extends IcefloeException {
  public IcefloeCommitStateUnknownException(String message) {
    super(message);
  }
}
