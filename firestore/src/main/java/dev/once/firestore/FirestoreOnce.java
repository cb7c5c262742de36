package dev.once.firestore;

import dev.once.config.Settings;
import dev.once.guard.Once;

/** The guard a deployed function uses: {@link Once} over the Firestore ledger its settings name. */
public final class FirestoreOnce {
  private FirestoreOnce() {}

  /** A function's one line: the guard over the Firestore ledger of the environment's settings. */
  public static Once fromEnvironment() {
    return from(Settings.fromEnvironment());
  }

  /**
   * The guard over the Firestore ledger {@code settings} name (project, emulator, collection, lease), connected on
   * first use, capping tries at their ONCE_MAX_ATTEMPTS; an unusable setting fails here, naming its variable.
   */
  public static Once from(Settings settings) {
    return Once.over(FirestoreLedger.fromSettings(settings), settings);
  }
}
