package dev.once.cli;

/**
 * The tool's exit codes, the same for every command (each command's {@code --help} says what "nothing" means for it).
 * 64 is sysexits' EX_USAGE and 70 its EX_SOFTWARE, so a script can tell a mistyped command from a finding.
 */
public final class Exit {
  /** Done; or found what was asked for. */
  public static final int OK = 0;
  /** Nothing found, or nothing done: an unknown key, nothing stuck, a release that lost to the holder. */
  public static final int NOTHING = 1;
  /** Firestore could not be read (or written): no emulator, no credentials, no answer in time. */
  public static final int FIRESTORE = 2;
  /** Another service failed or refused: the function re-driven, Pub/Sub, Cloud Storage, Gemini, Monitoring. */
  public static final int REMOTE = 3;
  /** A mistyped command, option or value, or a missing setting. */
  public static final int USAGE = 64;
  /** A bug in the tool: one line, and ONCE_DEBUG=1 prints the stack trace. */
  public static final int BUG = 70;

  private Exit() {}
}
