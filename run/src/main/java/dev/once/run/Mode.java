package dev.once.run;

import java.util.Locale;

/** The functions' {@code ANALYSIS_MODE}. */
public enum Mode {
  SYNC,
  BATCH;

  /** The value of {@code ANALYSIS_MODE} and of {@code --mode}. */
  public String value() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static Mode parse(String text) {
    return switch (text == null ? "" : text.strip().toLowerCase(Locale.ROOT)) {
      case "sync" -> SYNC;
      case "batch" -> BATCH;
      default -> throw new IllegalArgumentException("--mode is sync or batch, got \"" + text + "\"");
    };
  }
}
