package dev.once.local.eventarc;

import dev.once.local.storage.ObjectFinalized;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** A Cloud Storage finalize notification as the CloudEvent Eventarc makes of it. */
final class StorageEvents {
  private StorageEvents() {}

  static CloudEvent finalized(ObjectFinalized notification) {
    return new CloudEvent(
        notification.eventId(),
        "//storage.googleapis.com/projects/_/buckets/" + notification.bucket(),
        CloudEvent.STORAGE_FINALIZED,
        "objects/" + notification.name(),
        notification.eventTime(),
        "application/json",
        notification.objectJson().getBytes(StandardCharsets.UTF_8),
        Map.of());
  }
}
