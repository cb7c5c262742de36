package dev.once.cli.redrive;

import dev.once.cli.Failure;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** {@code gs://BUCKET/NAME#GENERATION} (or the key spelling {@code gcs:BUCKET/NAME#GENERATION}): one object generation. */
record ObjectLocation(String bucket, String name, long generation) {
  private static final Pattern URL = Pattern.compile("(?:gs://|gcs:)([^/]+)/(.+)#(\\d{1,19})");

  static ObjectLocation parse(String text) {
    Matcher m = URL.matcher(text.strip());
    if (!m.matches()) {
      throw Failure.usage("'" + text + "' is not gs://BUCKET/NAME#GENERATION (the generation is the number the"
          + " finalize event named; gcloud storage objects describe gs://BUCKET/NAME shows the live one)");
    }
    try {
      return new ObjectLocation(m.group(1), m.group(2), Long.parseLong(m.group(3)));
    } catch (NumberFormatException e) {
      throw Failure.usage("the generation of '" + text + "' is not a 64-bit number");
    }
  }

  /** The key DocumentUploaded claims its effects under. */
  String key() {
    return "gcs:" + bucket + "/" + name + "#" + generation;
  }

  @Override
  public String toString() {
    return "gs://" + bucket + "/" + name + "#" + generation;
  }
}
