package dev.once.wire.eventarc;

import dev.once.wire.storage.ObjectFinalized;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * A Cloud Storage finalize notification as the CloudEvent Eventarc makes of it: {@code ce-source
 * //storage.googleapis.com/projects/_/buckets/B}, {@code ce-subject objects/NAME}, the {@code ce-bucket} extension
 * (the attribute Eventarc triggers filter on; googleapis/google-cloudevents testdata
 * {@code StorageObjectDataWorkflows-simple} shows it), {@code ce-id} the notification's id, {@code ce-time} the
 * object's update time, and as data the object resource as Cloud Storage writes it.
 */
public final class StorageEvents {
  private StorageEvents() {}

  public static CloudEvent finalized(ObjectFinalized notification) {
    return new CloudEvent(
        notification.eventId(),
        "//storage.googleapis.com/projects/_/buckets/" + notification.bucket(),
        CloudEvent.STORAGE_FINALIZED,
        "objects/" + notification.name(),
        notification.eventTime(),
        "application/json",
        notification.objectJson().getBytes(StandardCharsets.UTF_8),
        Map.of("bucket", notification.bucket()));
  }
}
