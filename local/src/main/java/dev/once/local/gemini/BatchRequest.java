package dev.once.local.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import dev.once.wire.http.HttpError;
import dev.once.wire.http.Json;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@code batchGenerateContent} body, checked as the API checks it: a {@code batch.displayName} (required), and
 * {@code batch.inputConfig} holding exactly one of
 * {@code requests.requests[]} (each with a {@code request}, optionally {@code metadata}) or {@code fileName}; an
 * optional {@code webhookConfig} has absolute http(s) {@code uris} and an object {@code userMetadata}. The
 * requests' contents are not checked here: a bad one fails alone, in the job's results.
 */
record BatchRequest(String displayName, List<JsonNode> inlinedRequests, byte[] inputFile, long requestCount,
    List<URI> webhookUris, JsonNode webhookUserMetadata) {
  /**
   * The inline requests of one batch together stay under 20 MB (Batch API guide: inline requests suit "smaller
   * batches that keep the total request size under 20MB"; larger ones go through an input file). Checked on the
   * requests themselves, whatever the stand-in's body limit is set to.
   */
  static final long MAX_INLINE_BYTES = 20L * 1024 * 1024;

  static BatchRequest parse(JsonNode body, GeminiFiles files) {
    JsonNode batch = body.get("batch");
    if (batch == null || !batch.isObject()) {
      throw invalid("* BatchGenerateContentRequest.batch: batch is not specified\n");
    }
    JsonNode input = batch.get("inputConfig");
    if (input == null || !input.isObject()) {
      throw invalid("* BatchGenerateContentRequest.batch.input_config: input_config is not specified\n");
    }
    JsonNode requests = input.path("requests").get("requests");
    JsonNode fileName = input.get("fileName");
    if ((requests == null) == (fileName == null)) {
      throw invalid("* BatchGenerateContentRequest.batch.input_config.source: exactly one of requests or file_name"
          + " must be set\n");
    }
    List<JsonNode> inlined = null;
    byte[] inputFile = null;
    long count;
    if (requests != null) {
      if (!requests.isArray() || requests.isEmpty()) {
        throw invalid(
            "* BatchGenerateContentRequest.batch.input_config.requests.requests: requests must not be empty\n");
      }
      inlined = new ArrayList<>();
      long inlineBytes = 0;
      for (int i = 0; i < requests.size(); i++) {
        JsonNode item = requests.get(i);
        if (!item.isObject() || !item.path("request").isObject()) {
          throw invalid("* BatchGenerateContentRequest.batch.input_config.requests.requests[" + i
              + "].request: request is not specified\n");
        }
        inlineBytes += Json.text(item).getBytes(StandardCharsets.UTF_8).length;
        if (inlineBytes > MAX_INLINE_BYTES) {
          throw HttpError.tooLarge(MAX_INLINE_BYTES);
        }
        inlined.add(item.deepCopy());
      }
      count = inlined.size();
    } else {
      if (!fileName.isTextual() || !fileName.asText().startsWith("files/")) {
        throw invalid("Invalid value at 'batch.input_config.file_name': expected files/{id}");
      }
      // A file that is not there (never uploaded, deleted, expired) is refused as files.get refuses it. The job keeps
      // the bytes it was created from.
      inputFile = files.get(fileName.asText()).data();
      count = new String(inputFile, StandardCharsets.UTF_8).lines().filter(l -> !l.isBlank()).count();
    }
    List<URI> uris = new ArrayList<>();
    JsonNode userMetadata = null;
    JsonNode webhook = batch.get("webhookConfig");
    if (webhook != null && !webhook.isNull()) {
      if (!webhook.isObject()) {
        throw invalid("Invalid value at 'batch.webhook_config': expected an object.");
      }
      for (JsonNode uri : webhook.path("uris")) {
        uris.add(webhookUri(uri));
      }
      userMetadata = webhook.get("userMetadata");
      if (userMetadata != null && !userMetadata.isNull() && !userMetadata.isObject()) {
        throw invalid("Invalid value at 'batch.webhook_config.user_metadata': expected an object.");
      }
    }
    // "batch.displayName: Required. The user-defined name of this batch." (API reference, models.batchGenerateContent)
    JsonNode displayName = batch.get("displayName");
    if (displayName == null || !displayName.isTextual() || displayName.asText().isBlank()) {
      throw invalid("* BatchGenerateContentRequest.batch.display_name: display_name is required\n");
    }
    return new BatchRequest(displayName.asText(),
        inlined == null ? null : List.copyOf(inlined),
        inputFile, count, List.copyOf(uris), userMetadata);
  }

  private static URI webhookUri(JsonNode value) {
    try {
      URI uri = new URI(value.asText());
      if (!value.isTextual() || uri.getHost() == null
          || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))) {
        throw new IllegalArgumentException("not an absolute http(s) URL");
      }
      return uri;
    } catch (URISyntaxException | IllegalArgumentException e) {
      throw invalid("Invalid value at 'batch.webhook_config.uris': " + value + " is not a valid URL.");
    }
  }

  private static HttpError invalid(String message) {
    return HttpError.badRequest("invalid", message);
  }
}
