package dev.once.local.stack;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Every part of a {@link LocalStack}. Under {@code dev/run} each listens on a fixed default port, so that URLs in
 * the README, a browser tab or a second terminal keep working from one run to the next; each port has a variable
 * that moves it.
 */
public enum Part {
  FIRESTORE("Firestore emulator", 8681, false),
  PUBSUB("Pub/Sub emulator", 8682, false),
  STORAGE("Cloud Storage stand-in", 9023, false),
  GEMINI("Gemini stand-in", 9090, false),
  RELAY("Eventarc relay", 9300, false),
  NOTIFY("notification endpoint", 9400, false),
  DOCUMENT_UPLOADED("DocumentUploaded", 8081, true),
  MESSAGE_DELIVERED("MessageDelivered", 8082, true),
  GEMINI_WEBHOOK("GeminiWebhook", 8083, true),
  GEMINI_RECONCILER("GeminiReconciler", 8084, true),
  BATCH_COMPLETED("BatchCompleted", 8085, true);

  private final String title;
  private final int defaultPort;
  private final boolean function;

  Part(String title, int defaultPort, boolean function) {
    this.title = title;
    this.defaultPort = defaultPort;
    this.function = function;
  }

  public String title() {
    return title;
  }

  public int defaultPort() {
    return defaultPort;
  }

  public boolean isFunction() {
    return function;
  }

  /** {@code ONCE_FIRESTORE_PORT}, {@code ONCE_DOCUMENT_UPLOADED_PORT}, … (the first two predate this module). */
  public String portVariable() {
    return "ONCE_" + name() + "_PORT";
  }

  /** The function's entry point class, as Terraform deploys it. */
  public String target() {
    if (!function) {
      throw new IllegalStateException(title + " is not a function");
    }
    return "dev.once.functions." + title;
  }

  /** Short lower-case name for log files and the log's source column. */
  public String fileName() {
    return function ? title : name().toLowerCase(Locale.ROOT);
  }

  /** The function part whose entry point is {@code name} ({@code DocumentUploaded}). */
  public static Part function(String name) {
    return functions().stream().filter(p -> p.title.equals(name)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no function " + name));
  }

  public static List<Part> functions() {
    return Arrays.stream(values()).filter(Part::isFunction).toList();
  }
}
