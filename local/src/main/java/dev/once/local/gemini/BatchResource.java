package dev.once.local.gemini;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.wire.http.Json;

/**
 * A batch job as the API returns it: a long-running {@code Operation} whose {@code metadata} is the
 * {@code GenerateContentBatch} (the SDK reads name, displayName, state, times, model and
 * {@code metadata.output} from there), with {@code done}, {@code response} and {@code error} once it ended.
 */
final class BatchResource {
  private static final String TYPE_PREFIX = "type.googleapis.com/google.ai.generativelanguage.v1beta.";

  private BatchResource() {}

  static ObjectNode toJson(BatchJob.Snapshot job) {
    return toJson(job, true);
  }

  /**
   * A job as {@code batches.list} shows it: without its inlined responses, as Google's cookbook says ("the list API
   * currently doesn't return inlined_responses"), so a caller must get the job to read them. A responses file is
   * still named.
   */
  static ObjectNode listed(BatchJob.Snapshot job) {
    return toJson(job, false);
  }

  private static ObjectNode toJson(BatchJob.Snapshot job, boolean inlinedResponses) {
    ObjectNode operation = Json.object();
    operation.put("name", job.name());
    ObjectNode metadata = operation.putObject("metadata");
    metadata.put("@type", TYPE_PREFIX + "GenerateContentBatch");
    metadata.put("model", job.model());
    if (job.displayName() != null) {
      metadata.put("displayName", job.displayName());
    }
    metadata.put("name", job.name());
    metadata.put("createTime", job.createTime().toString());
    metadata.put("updateTime", job.updateTime().toString());
    if (job.endTime() != null) {
      metadata.put("endTime", job.endTime().toString());
    }
    ObjectNode stats = metadata.putObject("batchStats");
    stats.put("requestCount", Long.toString(job.requestCount()));
    if (job.state().isTerminal()) {
      stats.put("successfulRequestCount", Long.toString(job.succeeded()));
      stats.put("failedRequestCount", Long.toString(job.failed()));
      stats.put("pendingRequestCount", Long.toString(job.requestCount() - job.succeeded() - job.failed()));
    } else {
      stats.put("pendingRequestCount", Long.toString(job.requestCount()));
    }
    metadata.put("state", job.state().wireName());
    ObjectNode output = output(job, inlinedResponses);
    if (output != null) {
      metadata.set("output", output);
    }
    if (job.state().isTerminal()) {
      operation.put("done", true);
      // An Operation ends with a response or an error; a job that did not succeed keeps what it answered (PARTIAL)
      // in metadata.output, where the SDK reads a job's answers from.
      if (job.state() != BatchState.SUCCEEDED) {
        ObjectNode error = operation.putObject("error");
        error.put("code", job.errorStatus() != null ? BatchJobs.rpcCode(job.errorStatus()) : errorCode(job.state()));
        error.put("message", job.errorMessage() != null ? job.errorMessage() : errorMessage(job.state()));
      } else if (output != null) {
        ObjectNode response = operation.putObject("response");
        response.put("@type", TYPE_PREFIX + "GenerateContentBatchOutput");
        response.setAll(output.deepCopy());
      }
    }
    return operation;
  }

  private static ObjectNode output(BatchJob.Snapshot job, boolean inlinedResponses) {
    if (job.responsesFile() == null && (job.inlinedResponses() == null || !inlinedResponses)) {
      return null;
    }
    ObjectNode output = Json.object();
    if (job.responsesFile() != null) {
      output.put("responsesFile", job.responsesFile());
    } else {
      output.putObject("inlinedResponses").set("inlinedResponses", job.inlinedResponses());
    }
    return output;
  }

  /** google.rpc.Code numbers, as an Operation's error carries them. */
  static int errorCode(BatchState state) {
    return switch (state) {
      case CANCELLED -> 1;
      case EXPIRED -> 4;
      default -> 13;
    };
  }

  static String errorMessage(BatchState state) {
    return switch (state) {
      case CANCELLED -> "The batch was cancelled.";
      case EXPIRED -> "The batch was not processed within 48 hours and expired.";
      default -> "The batch failed (stand-in: planned outcome FAILED).";
    };
  }

  static String errorStatus(BatchState state) {
    return switch (state) {
      case CANCELLED -> "CANCELLED";
      case EXPIRED -> "DEADLINE_EXCEEDED";
      default -> "INTERNAL";
    };
  }
}
