package dev.once.pipeline;

import java.util.regex.Pattern;

/** Topic settings may be ids ({@code results}) or full names ({@code projects/p/topics/results}). */
public final class Topics {
  private static final Pattern FULL = Pattern.compile("projects/[^/\\s]+/topics/[^/\\s]+");
  private static final Pattern ID = Pattern.compile("[A-Za-z][A-Za-z0-9._~%+-]{2,254}");

  private Topics() {}

  /** The full topic name, the id resolved in {@code projectId}. */
  public static String fullName(String projectId, String idOrName) {
    String topic = idOrName.strip();
    if (FULL.matcher(topic).matches()) {
      return topic;
    }
    if (!ID.matcher(topic).matches() || topic.startsWith("goog")) {
      throw new IllegalArgumentException("not a Pub/Sub topic id or projects/p/topics/t name: \"" + topic + "\"");
    }
    if (projectId == null || projectId.isBlank()) {
      throw new IllegalArgumentException("topic \"" + topic + "\" is an id, but no project is known"
          + " (set GOOGLE_CLOUD_PROJECT or give the full name projects/p/topics/" + topic + ")");
    }
    return "projects/" + projectId + "/topics/" + topic;
  }
}
