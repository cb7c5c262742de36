package dev.once.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.util.Locale;

/**
 * The one gate every command that changes something passes (a release, a re-drive, a webhook registered, rotated or
 * deleted): it names what will change, in which project, as which account, then asks for a "yes" on standard input,
 * or takes {@code --yes} for it. Without either, nothing changes (exit 1): a leftover GOOGLE_CLOUD_PROJECT must not
 * let a release meant for a test project land in production. The account is the authenticated one (the application
 * default credentials' against a deployed project, the local user at a local stack), never a name typed in: it is
 * what the audit records.
 */
public final class Change {
  private Change() {}

  /**
   * @param what the change, as a phrase ("release analyse of gcs:inbox/a.pdf#1")
   * @return the account acting, for the record
   * @throws Failure exit 1 when the change is not confirmed
   */
  public static String confirm(Context context, String what) {
    String who = Operator.name(context);
    String where = context.deployed() ? "project " + context.project() + " (deployed)"
        : "project " + context.project() + " (local: emulators and stand-ins)";
    context.err().println("once: about to " + what);
    context.err().println("  in " + where);
    context.err().println("  as " + who);
    if (context.assumeYes()) {
      return who;
    }
    context.err().print("proceed? type yes: ");
    context.err().flush();
    String answer;
    try {
      BufferedReader in = context.in();
      answer = in == null ? null : in.readLine();
    } catch (IOException e) {
      answer = null;
    }
    if (answer == null || !answer.strip().toLowerCase(Locale.ROOT).matches("y|yes")) {
      throw Failure.notConfirmed("not confirmed: nothing changed (answer yes, or pass --yes)");
    }
    return who;
  }
}
