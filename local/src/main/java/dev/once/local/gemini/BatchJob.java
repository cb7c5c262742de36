package dev.once.local.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.once.wire.http.HttpError;
import java.net.URI;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * One batch job. Mutable, but only under the {@link BatchJobs} lock; everything outside sees {@link Snapshot}s.
 */
final class BatchJob {
  final long sequence;
  final String id;
  final String model;
  final String displayName;
  final List<JsonNode> inlinedRequests;
  /** The input file's bytes as the job was created from them (null: inlined requests). */
  final byte[] inputFile;
  final List<URI> webhookUris;
  final JsonNode webhookUserMetadata;
  final Instant createTime;
  final long requestCount;
  BatchState state = BatchState.PENDING;
  BatchState plannedOutcome;
  /** How its answers will come back (none: as Google documents them). */
  Set<AnswerFault> faults = EnumSet.noneOf(AnswerFault.class);
  Instant updateTime;
  Instant endTime;
  ArrayNode inlinedResponses;
  String responsesFile;
  long succeeded;
  long failed;
  /** Why it ended, when not as its state says by default ({@link BatchResource#errorCode}). */
  HttpError error;

  BatchJob(long sequence, String id, String model, String displayName, List<JsonNode> inlinedRequests,
      byte[] inputFile, long requestCount, List<URI> webhookUris, JsonNode webhookUserMetadata, Instant createTime,
      BatchState plannedOutcome) {
    this.sequence = sequence;
    this.id = id;
    this.model = model;
    this.displayName = displayName;
    this.inlinedRequests = inlinedRequests;
    this.inputFile = inputFile;
    this.webhookUris = webhookUris;
    this.webhookUserMetadata = webhookUserMetadata;
    this.createTime = createTime;
    this.requestCount = requestCount;
    this.updateTime = createTime;
    this.plannedOutcome = plannedOutcome;
  }

  String name() {
    return "batches/" + id;
  }

  Snapshot snapshot() {
    return new Snapshot(name(), model, displayName, state, createTime, updateTime, endTime,
        inlinedResponses == null ? null : inlinedResponses.deepCopy(), responsesFile,
        requestCount, succeeded, failed, error == null ? null : error.status(),
        error == null ? null : error.getMessage(), webhookUris, webhookUserMetadata);
  }

  /** An immutable view of a job at one moment, what the API and the webhook sender work from. */
  record Snapshot(String name, String model, String displayName, BatchState state, Instant createTime,
      Instant updateTime, Instant endTime, ArrayNode inlinedResponses, String responsesFile, long requestCount,
      long succeeded, long failed, String errorStatus, String errorMessage, List<URI> webhookUris,
      JsonNode webhookUserMetadata) {}
}
