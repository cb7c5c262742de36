package dev.once.local.eventarc;

import java.net.URI;
import java.time.Instant;

/** How one event's delivery to one function ended. */
public record DeliveryResult(String eventId, String type, URI target, Outcome outcome, int attempts, String last,
    Instant finishedAt) {

  /**
   * DELIVERED: a 2xx. GAVE_UP: retries exhausted (logged). UNROUTED: no function for the type (logged).
   * ABANDONED: the relay stopped before the delivery ended (a Pub/Sub message is then nacked, not lost).
   */
  public enum Outcome { DELIVERED, GAVE_UP, UNROUTED, ABANDONED }
}
