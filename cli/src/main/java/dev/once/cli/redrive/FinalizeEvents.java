package dev.once.cli.redrive;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.local.eventarc.DirectSender;
import dev.once.wire.eventarc.CloudEvent;
import dev.once.wire.storage.ObjectFinalized;
import java.io.IOException;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The finalize CloudEvent a re-drive sends, in Eventarc's shape: made from the object resource (the same attributes
 * the relay gives a Cloud Storage notification: source, subject, the {@code bucket} extension, the object's update
 * time; see wire/…/eventarc/StorageEvents), or taken back from a dead-lettered message, whose {@code ce-*}
 * attributes are the event's own.
 */
final class FinalizeEvents {
  /** CloudEvents attributes that travel as their own headers, not as extensions. */
  private static final Set<String> CORE = Set.of("id", "source", "type", "subject", "time", "specversion",
      "datacontenttype");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final SecureRandom RANDOM = new SecureRandom();

  private FinalizeEvents() {}

  /**
   * A new event for this object generation. Its id is new, as a second Cloud Storage notification's would be: the
   * function keys on bucket, name and generation, never on the event id.
   */
  static CloudEvent of(ObjectLocation object, String resourceJson) {
    return DirectSender.finalized(new ObjectFinalized(newEventId(), updated(resourceJson), object.bucket(),
        object.name(), object.generation(), resourceJson));
  }

  /** Eventarc's event ids for Cloud Storage are decimal numbers; one of 16 digits, at random. */
  static String newEventId() {
    return String.valueOf(1_000_000_000_000_000L + Math.floorMod(RANDOM.nextLong(), 9_000_000_000_000_000L));
  }

  private static Instant updated(String resourceJson) {
    try {
      JsonNode resource = JSON.readTree(resourceJson);
      return Instant.parse(resource.path("updated").asText(resource.path("timeCreated").asText()));
    } catch (IOException | DateTimeParseException e) {
      return Instant.now();
    }
  }

  /** True when a message's attributes are a finalize event's (CloudEvents' Pub/Sub binding, binary mode). */
  static boolean isFinalize(Map<String, String> attributes) {
    return CloudEvent.STORAGE_FINALIZED.equals(attributes.get("ce-type"));
  }

  /** The event a dead-lettered finalize message carries: its {@code ce-*} attributes, its data. */
  static CloudEvent fromMessage(Map<String, String> attributes, byte[] data) {
    Map<String, String> extensions = new LinkedHashMap<>();
    attributes.forEach((name, value) -> {
      String lower = name.toLowerCase(Locale.ROOT);
      if (lower.startsWith("ce-") && !CORE.contains(lower.substring(3))) {
        extensions.put(lower.substring(3), value);
      }
    });
    Instant time = null;
    if (attributes.get("ce-time") != null) {
      try {
        time = Instant.parse(attributes.get("ce-time"));
      } catch (DateTimeParseException e) {
        time = null; // an attribute we cannot read is left out, as Eventarc would not send it
      }
    }
    String id = attributes.getOrDefault("ce-id", newEventId());
    String contentType = attributes.getOrDefault("ce-datacontenttype",
        attributes.getOrDefault("content-type", "application/json"));
    return new CloudEvent(id, attributes.get("ce-source"), CloudEvent.STORAGE_FINALIZED, attributes.get("ce-subject"),
        time, contentType, data, extensions);
  }
}
