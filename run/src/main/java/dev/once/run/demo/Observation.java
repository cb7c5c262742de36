package dev.once.run.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.key.IdempotencyKey;
import dev.once.local.stack.Part;
import dev.once.local.stack.Topology;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What the stack shows about the demo's documents at one moment, read from the stand-ins' admin endpoints, the
 * results tap and Firestore — never from the demo's own account of what it sent.
 *
 * @param finalizeIds object name → the event ids of its finalize notifications (storage stand-in)
 * @param deliveries event id → how each delivery of it ended (relay)
 * @param relayBusy deliveries the relay has started and not ended, for any event
 * @param analyses document key → its analysis status and batch job, when written
 * @param messages document key → ids of the results published for it (the tap, so far)
 * @param notified Idempotency-Key → notifications answered 2xx (notification endpoint)
 * @param webhooks job name → webhook deliveries answered 2xx (Gemini stand-in)
 * @param gemini the Gemini stand-in's call counters
 */
record Observation(
    Map<String, List<String>> finalizeIds,
    Map<String, List<Delivery>> deliveries,
    long relayBusy,
    Map<IdempotencyKey, Analysis> analyses,
    Map<IdempotencyKey, List<String>> messages,
    Map<String, Integer> notified,
    Map<String, Integer> webhooks,
    JsonNode gemini) {

  /** How one delivery of an event to a function ended: DELIVERED or GAVE_UP (or UNROUTED, ABANDONED). */
  record Delivery(String outcome, int attempts) {
    boolean ended() {
      return !outcome.equals("ABANDONED");
    }
  }

  record Analysis(String status, String job, String reason) {}

  static final Set<String> FINAL = Set.of("analysed", "failed", "rejected");

  static Observation read(StackClient client, List<Upload> uploads, List<PubsubMessage> tapped) {
    Set<String> names = new HashSet<>();
    uploads.forEach(u -> names.add(u.name()));
    Map<String, List<String>> finalizeIds = new HashMap<>();
    for (JsonNode n : client.get(Part.STORAGE, "/_admin/notifications")) {
      if (n.path("bucket").asText().equals(Topology.BUCKET) && names.contains(n.path("name").asText())) {
        finalizeIds.computeIfAbsent(n.path("name").asText(), k -> new ArrayList<>()).add(n.path("eventId").asText());
      }
    }
    Map<String, List<Delivery>> deliveries = new HashMap<>();
    for (JsonNode d : client.get(Part.RELAY, "/_admin/deliveries")) {
      deliveries.computeIfAbsent(d.path("eventId").asText(), k -> new ArrayList<>())
          .add(new Delivery(d.path("outcome").asText(), d.path("attempts").asInt()));
    }
    JsonNode relay = client.get(Part.RELAY, "/_admin/counters");
    long ended = relay.path("delivered").asLong() + relay.path("gaveUp").asLong() + relay.path("unrouted").asLong();
    long busy = Math.max(0, relay.path("received").asLong() - ended);

    Map<IdempotencyKey, Analysis> analyses = new HashMap<>();
    for (Upload upload : uploads) {
      Optional<DocumentSnapshot> doc = client.analysis(upload.key());
      doc.ifPresent(d -> analyses.put(upload.key(),
          new Analysis(d.getString("status"), d.getString("job"), d.getString("reason"))));
    }
    tapped.addAll(client.pullResults());
    Map<IdempotencyKey, List<String>> messages = new HashMap<>();
    for (PubsubMessage m : tapped) {
      String key = m.getAttributesMap().get("idempotency_key");
      uploads.stream().filter(u -> u.key().value().equals(key)).findFirst()
          .ifPresent(u -> messages.computeIfAbsent(u.key(), k -> new ArrayList<>()).add(m.getMessageId()));
    }
    Map<String, Integer> notified = new HashMap<>();
    for (JsonNode n : client.get(Part.NOTIFY, "/_admin/received")) {
      JsonNode key = n.path("headers").path("idempotency-key");
      if (n.path("status").asInt() / 100 == 2 && key.isTextual()) {
        notified.merge(key.asText(), 1, Integer::sum);
      }
    }
    Map<String, Integer> webhooks = new HashMap<>();
    for (JsonNode w : client.get(Part.GEMINI, "/_admin/webhooks")) {
      if (w.path("status").asInt() / 100 == 2) {
        webhooks.merge(w.path("batch").asText(), 1, Integer::sum);
      }
    }
    return new Observation(finalizeIds, deliveries, busy, analyses, messages, notified, webhooks,
        client.get(Part.GEMINI, "/_admin/counters"));
  }

  /** Deliveries of these events that ended (a 2xx, or a give-up). */
  int endedDeliveries(List<String> eventIds) {
    int count = 0;
    for (String id : eventIds) {
      count += (int) deliveries.getOrDefault(id, List.of()).stream().filter(Delivery::ended).count();
    }
    return count;
  }

  List<String> finalizeIdsOf(Upload upload) {
    return finalizeIds.getOrDefault(upload.name(), List.of());
  }

  List<String> messageIdsOf(Upload upload) {
    return messages.getOrDefault(upload.key(), List.of());
  }

  Optional<Analysis> analysisOf(Upload upload) {
    return Optional.ofNullable(analyses.get(upload.key()));
  }

  int notifiedOf(Upload upload) {
    return notified.getOrDefault(upload.key().value(), 0);
  }

  boolean gaveUpOn(List<String> eventIds) {
    return eventIds.stream().anyMatch(id -> deliveries.getOrDefault(id, List.of()).stream()
        .anyMatch(d -> d.outcome().equals("GAVE_UP")));
  }

  long gemini(String counter) {
    return gemini.path(counter).asLong();
  }
}
