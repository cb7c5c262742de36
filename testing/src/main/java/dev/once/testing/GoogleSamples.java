package dev.once.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * Google's own sample events, kept verbatim with their sources named (the README beside them): the Pub/Sub and Cloud
 * Storage event data of googleapis/google-cloudevents' testdata, and a real Eventarc delivery captured in its issue
 * 151 (the {@code message_id} twins). Names are relative paths: {@code pubsub/google-cloudevents-issue-151.json}.
 */
public final class GoogleSamples {
  private GoogleSamples() {}

  /** The sample's bytes, as Google published them. */
  public static byte[] read(String name) {
    try (InputStream in = GoogleSamples.class.getResourceAsStream("samples/" + name)) {
      if (in == null) {
        throw new IllegalArgumentException("no sample " + name + " (see dev/once/testing/samples/README.md)");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
