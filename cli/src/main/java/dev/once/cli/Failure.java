package dev.once.cli;

/** A command cannot go on: one line for the operator (no stack trace) and the exit code that says why. */
public final class Failure extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int code;

  private Failure(int code, String message, Throwable cause) {
    super(message, cause);
    this.code = code;
  }

  public int code() {
    return code;
  }

  public static Failure firestore(String message, Throwable cause) {
    return new Failure(Exit.FIRESTORE, message, cause);
  }

  public static Failure remote(String message, Throwable cause) {
    return new Failure(Exit.REMOTE, message, cause);
  }

  /** A change the operator did not confirm: nothing done (exit 1). */
  public static Failure notConfirmed(String message) {
    return new Failure(Exit.NOTHING, message, null);
  }

  public static Failure usage(String message) {
    return new Failure(Exit.USAGE, message, null);
  }

  /** The first line of a throwable's message, with its cause's when it has none: what the operator reads. */
  public static String reason(Throwable e) {
    Throwable t = e;
    while (t.getMessage() == null && t.getCause() != null) {
      t = t.getCause();
    }
    String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    int newline = message.indexOf('\n');
    return (newline < 0 ? message : message.substring(0, newline)).strip();
  }
}
