package dev.once.run;

import java.util.List;

/**
 * The effect names the functions guard in the ledger, as {@code functions/src/main/java/dev/once/functions/Effects.java}
 * defines them. Duplicated on purpose: this module runs the functions as processes and does not compile against
 * them; {@code EffectsTest} reads that file and fails when the two lists differ.
 */
public final class Effects {
  public static final String ANALYSE = "analyse";
  public static final String COMPLETE = "complete";
  public static final String PUBLISH = "publish";
  public static final String NOTIFY = "notify";
  public static final String DEAD_LETTER = "dead-letter";

  /** In the order an event meets them. */
  public static final List<String> ALL = List.of(ANALYSE, COMPLETE, PUBLISH, NOTIFY, DEAD_LETTER);

  private Effects() {}
}
