package io.icefloe.spark.jni;

/** The Rust core's {@code CommitFailed} error: the catalog refused the commit after the table's retries. */
public class IcefloeCommitFailedException extends IcefloeException {
  public IcefloeCommitFailedException(String message) {
    super(message);
  }
}
