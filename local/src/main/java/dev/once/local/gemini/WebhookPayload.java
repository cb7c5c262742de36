package dev.once.local.gemini;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.wire.http.Json;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * The body of a Gemini API batch webhook: a thin event that points at the result rather than carrying it.
 * {@code {"type":"batch.succeeded","version":"v1","timestamp":"...","data":{"id":"batches/...", ...}}}; a
 * file-based job adds {@code file_name} and {@code output_file_uri}, a failed or expired one {@code error_code}
 * and {@code error_message}, a job created with {@code webhookConfig.userMetadata} echoes it as
 * {@code user_metadata}.
 */
final class WebhookPayload {
  private WebhookPayload() {}

  static ObjectNode of(BatchJob.Snapshot job, String baseUrl) {
    ObjectNode body = Json.object();
    body.put("type", job.state().webhookType());
    body.put("version", "v1");
    body.put("timestamp", Instant.now().truncatedTo(ChronoUnit.MILLIS).toString());
    ObjectNode data = body.putObject("data");
    data.put("id", job.name());
    if (job.responsesFile() != null) {
      data.put("file_name", job.responsesFile());
      data.put("output_file_uri", baseUrl + "/v1beta/" + job.responsesFile() + ":download?alt=media");
    }
    if (job.state() != BatchState.SUCCEEDED) {
      data.put("error_code", job.errorStatus() != null ? job.errorStatus() : BatchResource.errorStatus(job.state()));
      data.put("error_message", job.errorMessage() != null ? job.errorMessage()
          : BatchResource.errorMessage(job.state()));
    }
    if (job.webhookUserMetadata() != null && !job.webhookUserMetadata().isNull()) {
      data.set("user_metadata", job.webhookUserMetadata());
    }
    return body;
  }
}
