package dev.once.run.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.storage.Blob;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.key.StorageObjectKeys;
import dev.once.local.stack.Part;
import dev.once.local.stack.Topology;
import dev.once.run.Mode;
import dev.once.run.StackInfo;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The demo against a running stack, in the stack's mode: uploads the samples with every finalize notification
 * doubled, makes batch webhooks come twice, waits until everything settled, then redelivers one Pub/Sub message and
 * one finalize event and runs the reconciler; then reads from the stack what happened ({@link Observation}) and
 * reports it per effect ({@link DemoReport}). It waits for conditions with a deadline, never for a fixed time.
 */
public final class Demo {
  /** How long nothing may change before the demo calls an event lost. */
  static final Duration DEADLINE = Duration.ofSeconds(120);
  /** However much progress there is, one wait ends here. */
  static final Duration MAX_WAIT = Duration.ofMinutes(10);
  private static final Duration POLL = Duration.ofMillis(250);
  private static final ObjectMapper JSON = new ObjectMapper();
  /** Every batch webhook is sent twice (same webhook-id, as a sender that lost the first answer). */
  static final int WEBHOOKS_PER_JOB = 2;

  private final StackClient client;
  private final Mode mode;
  private final Consumer<String> progress;
  private final List<PubsubMessage> tapped = new ArrayList<>();
  /** Event id → the redeliveries asked for, so waiting knows how many deliveries of it must have ended. */
  private final Map<String, Integer> redelivered = new HashMap<>();
  private final List<String> duplicatesSent = new ArrayList<>();
  private final List<Upload> uploads = new ArrayList<>();
  private Observation last;

  private Demo(StackClient client, Mode mode, Consumer<String> progress) {
    this.client = client;
    this.mode = mode;
    this.progress = progress;
  }

  /** Runs the demo against {@code stack} (which must use the Gemini stand-in), in the stack's mode. */
  public static DemoReport run(StackInfo stack, Consumer<String> progress) {
    if (!stack.standInGemini()) {
      throw new IllegalStateException("the demo drives the Gemini stand-in, and this dev/run uses the real Gemini"
          + " API; start dev/run without GEMINI_API_KEY, or use dev/run --demo");
    }
    try (StackClient client = new StackClient(stack)) {
      return new Demo(client, stack.analysisMode(), progress).run();
    }
  }

  private DemoReport run() {
    String folder = "demo/" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")) + "-"
        + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x1000, 0x10000)) + "-" + mode.value() + "/";
    JsonNode geminiBefore = client.get(Part.GEMINI, "/_admin/counters");
    List<String> timeouts = new ArrayList<>();
    JsonNode reconciled = null;
    if (mode == Mode.BATCH) {
      // Before the uploads: the stand-in's clock may end a job before the demo asks it to.
      client.post(Part.GEMINI, "/_admin/webhook-mode?mode=twice");
      duplicatesSent.add("each batch job's webhook twice (Gemini stand-in)");
    }
    try {
      upload(folder);
      if (mode == Mode.BATCH) {
        await("every document submitted to a batch job or refused", this::submitted);
        client.post(Part.GEMINI, "/_admin/complete-all");
        progress.accept("batch jobs finished (Gemini stand-in: complete-all); their webhooks come twice");
      }
      await("every document analysed or refused, published and notified", this::settled);
      reconciled = redeliverAndReconcile();
      await("the redelivered events handled", this::settled);
    } catch (Timeout e) {
      timeouts.add(e.getMessage());
    } finally {
      if (mode == Mode.BATCH) {
        client.post(Part.GEMINI, "/_admin/webhook-mode?mode=normal");
      }
    }
    if (last == null) {
      last = observe();
    }
    return new Evaluation(client, mode, uploads, last, geminiBefore, reconcilerVisits(), folder, duplicatesSent,
        reconciled, timeouts).report();
  }

  private void upload(String folder) {
    client.post(Part.STORAGE, "/_admin/notify-twice?enabled=true");
    try {
      for (Samples.Sample sample : Samples.all(folder)) {
        String name = folder + sample.fileName();
        Blob blob = client.upload(name, sample.contentType(), sample.content());
        uploads.add(
            new Upload(sample, name, StorageObjectKeys.of(blob.getBucket(), blob.getName(), blob.getGeneration())));
      }
    } finally {
      client.post(Part.STORAGE, "/_admin/notify-twice?enabled=false");
    }
    duplicatesSent.add("every finalize notification twice, with two event ids (storage stand-in)");
    progress.accept("uploaded " + uploads.size() + " documents to gs://" + Topology.BUCKET + "/" + folder
        + " with the storage stand-in's notifications doubled");
  }

  /** One Pub/Sub message and one finalize event again, unchanged (same id); then the scheduler's reconciler call. */
  private JsonNode redeliverAndReconcile() {
    Upload invoice = uploads.get(0);
    Observation now = observe();
    String messageId = now.messageIdsOf(invoice).get(0);
    String finalizeId = now.finalizeIdsOf(invoice).get(0);
    client.post(Part.RELAY, "/_admin/redeliver?id=" + messageId);
    redelivered.merge(messageId, 1, Integer::sum);
    client.post(Part.RELAY, "/_admin/redeliver?id=" + finalizeId);
    redelivered.merge(finalizeId, 1, Integer::sum);
    duplicatesSent.add("Pub/Sub message " + messageId + " and finalize event " + finalizeId + " of "
        + invoice.sample().fileName() + " redelivered (relay)");
    JsonNode summary = client.reconcile();
    duplicatesSent.add("the reconciler run once (what Cloud Scheduler does)");
    progress.accept("redelivered a Pub/Sub message and a finalize event; ran the reconciler");
    return summary;
  }

  private Optional<String> submitted(Observation o) {
    for (Upload upload : uploads) {
      Optional<String> waiting = finalizeDelivered(o, upload);
      if (waiting.isPresent()) {
        return waiting;
      }
      String status = o.analysisOf(upload).map(Observation.Analysis::status).orElse("none");
      if (!status.equals("submitted") && !Observation.FINAL.contains(status)) {
        return Optional.of(upload.name() + " has no analysis yet");
      }
    }
    return relayIdle(o);
  }

  private Optional<String> settled(Observation o) {
    for (Upload upload : uploads) {
      Optional<String> waiting = finalizeDelivered(o, upload);
      if (waiting.isPresent()) {
        return waiting;
      }
      String status = o.analysisOf(upload).map(Observation.Analysis::status).orElse("none");
      if (!Observation.FINAL.contains(status)) {
        return Optional.of(upload.name() + " is not analysed or refused yet (status " + status + ")");
      }
      if (o.notifiedOf(upload) < 1) {
        return Optional.of(upload.name() + "'s result is not notified yet");
      }
      for (String id : o.messageIdsOf(upload)) {
        if (o.endedDeliveries(List.of(id)) < 1 + redelivered.getOrDefault(id, 0)) {
          return Optional.of("result message " + id + " is still being delivered");
        }
      }
      if (mode == Mode.BATCH) {
        String job = o.analysisOf(upload).map(Observation.Analysis::job).orElse(null);
        if (job != null && o.webhooks().getOrDefault(job, 0) < WEBHOOKS_PER_JOB) {
          return Optional.of("the webhooks of " + job + " are still being sent");
        }
      }
    }
    return relayIdle(o);
  }

  private Optional<String> finalizeDelivered(Observation o, Upload upload) {
    List<String> ids = o.finalizeIdsOf(upload);
    if (ids.isEmpty()) {
      return Optional.of("no finalize notification for " + upload.name() + " yet");
    }
    for (String id : ids) {
      if (o.endedDeliveries(List.of(id)) < 1 + redelivered.getOrDefault(id, 0)) {
        return Optional.of("finalize event " + id + " of " + upload.name() + " is still being delivered");
      }
    }
    return Optional.empty();
  }

  private static Optional<String> relayIdle(Observation o) {
    return o.relayBusy() > 0 ? Optional.of("the relay has " + o.relayBusy() + " deliveries in progress")
        : Optional.empty();
  }

  /** A condition that did not come true within the deadline: an event was lost, or something is stuck. */
  private static final class Timeout extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Timeout(String message) {
      super(message);
    }
  }

  /**
   * Waits until {@code pending} finds nothing missing. The deadline counts from the last progress (what is missing
   * changed), so a slow machine gets the time it needs and a stuck event is still reported.
   */
  private void await(String what, Function<Observation, Optional<String>> pending) {
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    long cap = System.nanoTime() + MAX_WAIT.toNanos();
    String before = null;
    while (true) {
      Observation o = observe();
      Optional<String> waiting = pending.apply(o);
      if (waiting.isEmpty()) {
        return;
      }
      if (!waiting.get().equals(before)) {
        before = waiting.get();
        deadline = System.nanoTime() + DEADLINE.toNanos();
      }
      if (System.nanoTime() - deadline > 0 || System.nanoTime() - cap > 0) {
        throw new Timeout("nothing happened for " + DEADLINE.toSeconds() + " s while waiting for " + what
            + ": " + waiting.get());
      }
      LockSupport.parkNanos(POLL.toNanos());
    }
  }

  /**
   * What the stack says now. A look that fails (a Firestore read or a stand-in's answer past its bound on a loaded
   * machine) is looked again, for up to {@link #DEADLINE}: a slow answer is not a lost event. It was: one read over
   * 20 s ended the whole demo although its waits had minutes left.
   */
  private Observation observe() {
    long giveUp = System.nanoTime() + DEADLINE.toNanos();
    while (true) {
      try {
        last = Observation.read(client, uploads, tapped);
        return last;
      } catch (RuntimeException e) {
        if (System.nanoTime() - giveUp > 0) {
          throw e;
        }
        progress.accept("the stack did not answer in time (" + e.getMessage() + "); looking again");
        LockSupport.parkNanos(POLL.toNanos());
      }
    }
  }

  /**
   * Job key's hash (the key as log lines name it) → how many times the reconciler met the job: its own log lines (one per job and run), the function's
   * report of each event it handled.
   */
  private Map<String, Integer> reconcilerVisits() {
    Map<String, Integer> visits = new HashMap<>();
    Path log = client.stack().logs().resolve(Part.GEMINI_RECONCILER.fileName() + ".log");
    if (!Files.exists(log)) {
      return visits;
    }
    try {
      for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
        if (line.startsWith("{") && line.contains("\"keyHash\"")) {
          JsonNode entry = JSON.readTree(line);
          if (entry.hasNonNull("keyHash") && entry.hasNonNull("outcome")) {
            visits.merge(entry.get("keyHash").asText(), 1, Integer::sum);
          }
        }
      }
    } catch (IOException e) {
      // a log being written to may end in half a line: count what was readable
    }
    return visits;
  }
}
