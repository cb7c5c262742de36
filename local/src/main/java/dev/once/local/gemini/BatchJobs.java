package dev.once.local.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.wire.http.HttpError;
import dev.once.wire.http.Json;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The batch jobs and their clock. Nothing moves by itself: {@link #advance()} takes every live job one step
 * (PENDING to RUNNING, RUNNING to its planned end), so tests decide exactly when a job ends and how
 * (SUCCEEDED unless planned otherwise). A job that ends is handed to {@code onEnd} (the webhook sender),
 * outside the lock.
 */
final class BatchJobs {
  /**
   * Jobs a project may have running at once (Gemini API rate limits, Batch API: "Concurrent batch requests: 100");
   * one more is refused 429 RESOURCE_EXHAUSTED, as Google refuses quota, and made nothing.
   */
  static final int MAX_CONCURRENT_JOBS = 100;

  private final Map<String, BatchJob> jobs = new LinkedHashMap<>();
  private final GeminiFiles files;
  private final ServedModels models;
  private final Supplier<ContentGenerator.Behaviour> behaviour;
  private final InstantSource clock;
  private final Consumer<BatchJob.Snapshot> onEnd;
  private long sequence;
  private BatchState defaultOutcome = BatchState.SUCCEEDED;
  private Set<AnswerFault> defaultFaults = EnumSet.noneOf(AnswerFault.class);
  /** Document keys whose request fails any job holding it as a whole ({@link #poison}). */
  private final Set<String> poisoned = new HashSet<>();

  /**
   * @param models who answers each request: its model, or the one it is routed to (its answers' {@code modelVersion})
   * @param clock the stand-in's clock: jobs' create, update and end times, which bill their answers
   */
  BatchJobs(GeminiFiles files, ServedModels models, Supplier<ContentGenerator.Behaviour> behaviour, InstantSource clock,
      Consumer<BatchJob.Snapshot> onEnd) {
    this.files = files;
    this.models = models;
    this.behaviour = behaviour;
    this.clock = clock;
    this.onEnd = onEnd;
  }

  record Page(List<BatchJob.Snapshot> jobs, String nextPageToken) {}

  synchronized BatchJob.Snapshot create(String model, String displayName, List<JsonNode> inlinedRequests,
      byte[] inputFile, long requestCount, List<URI> webhookUris, JsonNode webhookUserMetadata) {
    if (jobs.values().stream().filter(j -> !j.state.isTerminal()).count() >= MAX_CONCURRENT_JOBS) {
      throw new HttpError(429, "RESOURCE_EXHAUSTED", "rateLimitExceeded", "Resource has been exhausted: the project"
          + " already has " + MAX_CONCURRENT_JOBS + " batch jobs pending or running (concurrent batch requests).");
    }
    BatchJob job = new BatchJob(++sequence, Ids.random(20), model, displayName, inlinedRequests, inputFile,
        requestCount, webhookUris, webhookUserMetadata, now(), defaultOutcome);
    job.faults = copy(defaultFaults);
    jobs.put(job.name(), job);
    return job.snapshot();
  }

  synchronized BatchJob.Snapshot get(String name) {
    return find(name).snapshot();
  }

  synchronized List<JsonNode> requests(String name) {
    BatchJob job = find(name);
    if (job.inlinedRequests != null) {
      return job.inlinedRequests.stream().<JsonNode>map(JsonNode::deepCopy).toList();
    }
    return new String(job.inputFile, StandardCharsets.UTF_8).lines().filter(line -> !line.isBlank())
        .map(Json::parseTrusted).toList();
  }

  synchronized List<String> names() {
    return List.copyOf(jobs.keySet());
  }

  /**
   * Oldest first; the page token is the sequence number of the last job on the previous page. Google documents no
   * order for batches.list, and the pipeline must not depend on one: listing oldest first breaks code that assumes
   * newest first (stopping at the first job older than what it looks for), as a silent assumption should be broken.
   */
  synchronized Page list(int pageSize, String pageToken) {
    long after = 0;
    if (pageToken != null && !pageToken.isEmpty()) {
      try {
        after = Long.parseLong(new String(Base64.getUrlDecoder().decode(pageToken), StandardCharsets.UTF_8));
      } catch (IllegalArgumentException e) {
        throw HttpError.badRequest("invalid", "Invalid page token.");
      }
    }
    long bound = after;
    List<BatchJob> ordered = jobs.values().stream().filter(j -> j.sequence > bound)
        .sorted(Comparator.comparingLong((BatchJob j) -> j.sequence)).toList();
    List<BatchJob.Snapshot> page = ordered.stream().limit(pageSize).map(BatchJob::snapshot).toList();
    String next = ordered.size() > pageSize
        ? Base64.getUrlEncoder().withoutPadding().encodeToString(
            Long.toString(ordered.get(pageSize - 1).sequence).getBytes(StandardCharsets.UTF_8))
        : null;
    return new Page(page, next);
  }

  synchronized void delete(String name) {
    find(name);
    jobs.remove(name);
  }

  synchronized void defaultOutcome(BatchState outcome) {
    defaultOutcome = requireTerminal(outcome);
  }

  /** How the answers of jobs created from now on come back. */
  synchronized void defaultFaults(Set<AnswerFault> faults) {
    defaultFaults = copy(faults);
  }

  /** How this job's answers come back when it ends. */
  synchronized void faults(String name, Set<AnswerFault> faults) {
    find(name).faults = copy(faults);
  }

  private static Set<AnswerFault> copy(Set<AnswerFault> faults) {
    Set<AnswerFault> copy = EnumSet.noneOf(AnswerFault.class);
    copy.addAll(faults);
    return copy;
  }

  /**
   * A job holding this document key's request (inlined {@code metadata.document_key}, or a file line's {@code key})
   * ends FAILED for what its requests hold, whatever was planned: google.rpc 3 INVALID_ARGUMENT, nothing answered.
   */
  synchronized void poison(String documentKey) {
    poisoned.add(documentKey);
  }

  private boolean holdsPoison(BatchJob job) {
    if (poisoned.isEmpty()) {
      return false;
    }
    List<JsonNode> requests = job.inlinedRequests != null ? job.inlinedRequests
        : new String(job.inputFile, StandardCharsets.UTF_8).lines().filter(line -> !line.isBlank())
            .map(Json::parseTrusted).toList();
    return requests.stream().anyMatch(request -> poisoned.contains(
        request.path("metadata").path("document_key").asText(request.path("key").asText())));
  }

  /** How a job will end when the clock reaches its end (SUCCEEDED, FAILED or EXPIRED, or CANCELLED). */
  synchronized void plan(String name, BatchState outcome) {
    find(name).plannedOutcome = requireTerminal(outcome);
  }

  BatchJob.Snapshot cancel(String name) {
    BatchJob.Snapshot ended;
    synchronized (this) {
      BatchJob job = find(name);
      if (job.state.isTerminal()) {
        throw new HttpError(400, "FAILED_PRECONDITION", "failedPrecondition",
            "Batch " + name + " is already in a terminal state: " + job.state.wireName());
      }
      ended = end(job, BatchState.CANCELLED);
    }
    onEnd.accept(ended);
    return ended;
  }

  /** Every live job one step forward; returns the jobs that ended. */
  List<BatchJob.Snapshot> advance() {
    List<BatchJob.Snapshot> ended = new ArrayList<>();
    synchronized (this) {
      for (BatchJob job : jobs.values()) {
        if (job.state == BatchState.PENDING) {
          job.state = BatchState.RUNNING;
          job.updateTime = now();
        } else if (job.state == BatchState.RUNNING) {
          ended.add(end(job, job.plannedOutcome));
        }
      }
    }
    ended.forEach(onEnd);
    return ended;
  }

  /** Every live job straight to its planned end. */
  List<BatchJob.Snapshot> completeAll() {
    List<BatchJob.Snapshot> ended = new ArrayList<>();
    synchronized (this) {
      for (BatchJob job : jobs.values()) {
        if (!job.state.isTerminal()) {
          ended.add(end(job, job.plannedOutcome));
        }
      }
    }
    ended.forEach(onEnd);
    return ended;
  }

  /** One job straight to {@code state} (its planned end when null); a job that already ended is left alone. */
  BatchJob.Snapshot finish(String name, BatchState state) {
    BatchJob.Snapshot ended;
    synchronized (this) {
      BatchJob job = find(name);
      if (job.state.isTerminal()) {
        return job.snapshot();
      }
      ended = end(job, state == null ? job.plannedOutcome : requireTerminal(state));
    }
    onEnd.accept(ended);
    return ended;
  }

  private BatchJob.Snapshot end(BatchJob job, BatchState planned) {
    BatchState outcome = planned;
    if (planned == BatchState.SUCCEEDED && holdsPoison(job)) {
      outcome = BatchState.FAILED;
      job.error = POISONED;
    }
    // A job that does not succeed answers nothing, unless told to end part-way through (PARTIAL).
    boolean partial = outcome != BatchState.SUCCEEDED && job.faults.contains(AnswerFault.PARTIAL);
    if (outcome == BatchState.SUCCEEDED || partial) {
      if (job.inlinedRequests != null) {
        runInlined(job, partial);
      } else {
        runFile(job, partial);
      }
    }
    job.state = outcome;
    job.endTime = now();
    job.updateTime = job.endTime;
    return job.snapshot();
  }

  /** Each answered request's {@code {"response"|"error", "metadata"}}, then the job's faults applied. */
  private void runInlined(BatchJob job, boolean partial) {
    List<ObjectNode> entries = new ArrayList<>();
    for (JsonNode item : answered(job.inlinedRequests, partial)) {
      ObjectNode entry = Json.object();
      entry.setAll(answer(job, item.path("request")));
      if (item.has("metadata")) {
        entry.set("metadata", item.get("metadata"));
      }
      entries.add(entry);
    }
    misfile(job, entries, "metadata");
    if (job.faults.contains(AnswerFault.NO_METADATA)) {
      entries.forEach(entry -> entry.remove("metadata"));
    }
    ArrayNode responses = Json.array();
    shuffled(job, entries).forEach(responses::add);
    job.inlinedResponses = responses;
  }

  /** Each answered line's {@code {"key", "response"|"error"}}, then the job's faults applied, as a responses file. */
  private void runFile(BatchJob job, boolean partial) {
    List<String> lines = new String(job.inputFile, StandardCharsets.UTF_8).lines().filter(l -> !l.isBlank()).toList();
    List<ObjectNode> entries = new ArrayList<>();
    for (String line : answered(lines, partial)) {
      ObjectNode entry = Json.object();
      try {
        JsonNode item = Json.parseTrusted(line);
        if (item.has("key")) {
          entry.set("key", item.get("key"));
        }
        entry.setAll(answer(job, item.path("request")));
      } catch (IllegalArgumentException e) {
        entry.setAll(failure(HttpError.badRequest("invalid", "Invalid JSON line: " + e.getMessage())));
        job.failed++;
      }
      entries.add(entry);
    }
    misfile(job, entries, "key");
    StringBuilder output = new StringBuilder();
    shuffled(job, entries).forEach(entry -> output.append(Json.text(entry)).append('\n'));
    job.responsesFile = files.putGenerated("batch-" + job.id + "-output", "application/jsonl",
        output.toString().getBytes(StandardCharsets.UTF_8)).name();
  }

  /** All the requests, or the first half (rounded up) of a job ending part-way through. */
  private static <T> List<T> answered(List<T> requests, boolean partial) {
    return partial ? requests.subList(0, (requests.size() + 1) / 2) : requests;
  }

  /** MISFILED: the first two answers under each other's key. */
  private static void misfile(BatchJob job, List<ObjectNode> entries, String field) {
    if (job.faults.contains(AnswerFault.MISFILED) && entries.size() >= 2) {
      JsonNode first = entries.get(0).get(field);
      JsonNode second = entries.get(1).get(field);
      if (first != null && second != null) {
        entries.get(0).set(field, second);
        entries.get(1).set(field, first);
      }
    }
  }

  /** SHUFFLED: out of request order, the same order for the same job. */
  private static List<ObjectNode> shuffled(BatchJob job, List<ObjectNode> entries) {
    if (!job.faults.contains(AnswerFault.SHUFFLED)) {
      return entries;
    }
    List<ObjectNode> shuffled = new ArrayList<>(entries);
    Collections.shuffle(shuffled, new Random(job.id.hashCode()));
    if (shuffled.equals(entries) && shuffled.size() > 1) {
      Collections.rotate(shuffled, 1); // out of order, however few
    }
    return shuffled;
  }

  /** {@code {"response":...}} or, for a request the API would reject, {@code {"error":{code,message,status}}}. */
  private ObjectNode answer(BatchJob job, JsonNode request) {
    ObjectNode result = Json.object();
    if (job.faults.contains(AnswerFault.INTERNAL_ERRORS) && job.succeeded + job.failed < (job.requestCount + 1) / 2) {
      job.failed++;
      return failure(INTERNAL);
    }
    try {
      String model = request.path("model").asText(job.model);
      ServedModels.Model answering = models.answering(model.substring(model.indexOf('/') + 1), "v1",
          "batchGenerateContent");
      result.set("response", ContentGenerator.generate(answering, request, behaviour.get()));
      job.succeeded++;
    } catch (HttpError e) {
      result.setAll(failure(e));
      job.failed++;
    }
    return result;
  }

  /**
   * A google.rpc.Status, as a batch's answer carries one: {@code code} (the google.rpc code, not the HTTP status) and
   * {@code message}, as in googleapis/python-genai#1341's {@code {'message': …, 'code': 13}}.
   */
  private static ObjectNode failure(HttpError e) {
    ObjectNode result = Json.object();
    ObjectNode error = result.putObject("error");
    error.put("code", rpcCode(e.status()));
    error.put("message", e.getMessage());
    return result;
  }

  /** A whole job's failure for what one of its requests holds ({@link #poison}). */
  private static final HttpError POISONED = HttpError.badRequest("invalid", "Request contains an invalid argument.");

  /** Google's retryable internal error for one request of a job (INTERNAL_ERRORS). */
  private static final HttpError INTERNAL = new HttpError(500, "INTERNAL", "backendError", "An internal error has"
      + " occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting");

  /** google/rpc/code.proto's number for a canonical status name. */
  static int rpcCode(String status) {
    return switch (String.valueOf(status)) {
      case "CANCELLED" -> 1;
      case "INVALID_ARGUMENT" -> 3;
      case "DEADLINE_EXCEEDED" -> 4;
      case "NOT_FOUND" -> 5;
      case "ALREADY_EXISTS" -> 6;
      case "PERMISSION_DENIED" -> 7;
      case "RESOURCE_EXHAUSTED" -> 8;
      case "FAILED_PRECONDITION" -> 9;
      case "ABORTED" -> 10;
      case "OUT_OF_RANGE" -> 11;
      case "UNIMPLEMENTED" -> 12;
      case "INTERNAL" -> 13;
      case "UNAVAILABLE" -> 14;
      case "UNAUTHENTICATED" -> 16;
      default -> 2;
    };
  }

  private BatchJob find(String name) {
    BatchJob job = jobs.get(name);
    if (job == null) {
      throw HttpError.notFound("Requested entity was not found.");
    }
    return job;
  }

  private static BatchState requireTerminal(BatchState state) {
    if (!state.isTerminal()) {
      throw new IllegalArgumentException(
          "a batch can only end as SUCCEEDED, FAILED, CANCELLED or EXPIRED, not " + state);
    }
    return state;
  }

  private Instant now() {
    return clock.instant().truncatedTo(ChronoUnit.MILLIS);
  }
}
