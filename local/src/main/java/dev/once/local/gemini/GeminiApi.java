package dev.once.local.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.once.local.http.AdminRoutes;
import dev.once.local.http.AmbiguousFailure;
import dev.once.local.http.ApiHandler;
import dev.once.local.http.Faults;
import dev.once.local.http.Reply;
import dev.once.local.http.Request;
import dev.once.wire.http.Counters;
import dev.once.wire.http.HttpError;
import dev.once.wire.http.Json;
import dev.once.wire.http.Responses;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * What {@code com.google.genai:google-genai} 2.0.0 calls on the Gemini Developer API, under {@code /v1},
 * {@code /v1beta} or {@code /v1alpha} (the SDK's default version is {@code v1}): generateContent, countTokens,
 * batchGenerateContent, batches get/list/cancel/delete, and the Files API subset a file-based batch needs (an upload is
 * counted as {@code files.upload}, its start, and {@code files.uploadChunk}, each request carrying bytes, the last of
 * which stores the file). Every
 * call is counted per method before anything else happens, then authenticated ({@code x-goog-api-key} or
 * {@code ?key=}), then subject to injected faults; once carried out it is counted as {@code <method>.carriedOut}
 * and may still fail ambiguously ({@link Faults#ambiguousNext}). {@code GET /.well-known/jwks.json} serves the
 * public keys of dynamic webhooks, as Google does, without a key.
 */
final class GeminiApi extends ApiHandler {
  private static final Set<String> VERSIONS = Set.of("v1", "v1beta", "v1alpha");
  private static final Pattern MODEL_ID = Pattern.compile("(gemini|gemma|learnlm)-[a-z0-9][a-z0-9.-]*");
  private static final int DEFAULT_PAGE_SIZE = 50;

  private final BatchJobs jobs;
  private final ServedModels models;
  private final Supplier<ContentGenerator.Behaviour> behaviour;
  private final GeminiFiles files;
  private final Counters counters;
  private final Faults faults;
  private final AdminRoutes admin;
  private final Supplier<String> baseUrl;
  private final Supplier<JsonNode> jwks;
  private final Consumer<HttpExchange> resetter;
  private final String apiKey;
  private final long maxRequestBytes;

  private static final List<String> JWKS_PATH = List.of(".well-known", "jwks.json");

  /** Every operation that can be counted and armed: the names {@link #route} gives. */
  static final Set<String> OPERATIONS = Set.of("generateContent", "countTokens", "models.get", "batchGenerateContent",
      "batches.get",
      "batches.list", "batches.cancel", "batches.delete", "files.upload", "files.uploadChunk", "files.get",
      "files.delete", "files.download");

  /** One API method: the name it is counted under, and what carries it out. */
  private record Route(String method, Supplier<Reply> action) {}

  GeminiApi(BatchJobs jobs, ServedModels models, Supplier<ContentGenerator.Behaviour> behaviour, GeminiFiles files,
      Counters counters, Faults faults, AdminRoutes.Own admin, Supplier<String> baseUrl, Supplier<JsonNode> jwks,
      Consumer<HttpExchange> resetter, String apiKey, long maxRequestBytes, long maxUploadBytes) {
    super(Math.max(maxRequestBytes, maxUploadBytes));
    this.models = models;
    this.behaviour = behaviour;
    this.jwks = jwks;
    this.resetter = resetter;
    this.jobs = jobs;
    this.files = files;
    this.counters = counters;
    this.faults = faults;
    this.admin = new AdminRoutes(counters, faults, admin);
    this.baseUrl = baseUrl;
    this.apiKey = apiKey;
    this.maxRequestBytes = maxRequestBytes;
  }

  @Override
  protected void serve(Request request) {
    List<String> path = request.segments();
    if (!path.isEmpty() && path.get(0).equals("_admin")) {
      admin.serve(request, path.subList(1, path.size()));
      return;
    }
    if (request.method().equals("GET") && path.equals(JWKS_PATH)) {
      counters.increment("jwks.get"); // public, like Google's: no key, no injected faults
      Reply.json(jwks.get()).send(request.exchange());
      return;
    }
    Route route = route(request, path);
    counters.increment(route.method());
    authenticate(request);
    faults.inject(counters, route.method(), GeminiApi::injectedFailure);
    Reply reply = route.action().get(); // an HttpError here means nothing was carried out
    counters.increment(route.method() + ".carriedOut");
    Optional<AmbiguousFailure> failure = faults.takeAmbiguous(route.method());
    if (failure.isEmpty()) {
      reply.send(request.exchange());
      return;
    }
    counters.increment(route.method() + ".ambiguous");
    counters.increment("ambiguousFailures");
    failure.get().inflict(() -> reply.send(request.exchange()), () -> resetter.accept(request.exchange()),
        status -> {
          throw injectedFailure(status);
        });
  }

  private Route route(Request request, List<String> path) {
    String method = request.method();
    if (path.size() == 3 && path.get(0).equals("upload") && VERSIONS.contains(path.get(1))
        && path.get(2).equals("files") && method.equals("POST")) {
      String version = path.get(1);
      boolean start = uploadCommands(request).contains("start");
      return new Route(start ? "files.upload" : "files.uploadChunk",
          () -> start ? startUpload(request, version) : uploadChunk(request, version));
    }
    if (path.size() < 2 || !VERSIONS.contains(path.get(0))) {
      throw methodNotFound();
    }
    String version = path.get(0);
    String collection = path.get(1);
    String resource = path.size() == 3 ? path.get(2) : null;
    String verb = null;
    if (resource != null && resource.indexOf(':') >= 0) {
      verb = resource.substring(resource.lastIndexOf(':') + 1);
      resource = resource.substring(0, resource.lastIndexOf(':'));
    }
    String id = resource;
    switch (collection + " " + method + " " + (path.size() == 2 ? "-" : verb == null ? "id" : verb)) {
      case "models POST generateContent" -> {
        return new Route("generateContent", () -> generateContent(request, version, id));
      }
      case "models POST countTokens" -> {
        return new Route("countTokens", () -> {
          ServedModels.Model answering = models.answering(modelId(id, version, "countTokens"), version, "countTokens");
          return Reply.json(ContentGenerator.countTokens(answering, Json.parse(request.body(maxRequestBytes))));
        });
      }
      case "models GET id" -> {
        return new Route("models.get", () -> Reply.json(models.resource(modelId(id, version, "get"), version)));
      }
      case "models POST batchGenerateContent" -> {
        return new Route("batchGenerateContent", () -> batchGenerateContent(request, version, id));
      }
      case "batches GET -" -> {
        return new Route("batches.list", () -> listBatches(request));
      }
      case "batches GET id" -> {
        return new Route("batches.get", () -> {
          BatchJob.Snapshot job = jobs.get("batches/" + id);
          if (job.state().isTerminal()) {
            // Looks at an ended job: what a completion costs, apart from status polls of running ones.
            counters.increment("batches.get.ended");
          }
          return Reply.json(BatchResource.toJson(job));
        });
      }
      case "batches POST cancel" -> {
        return new Route("batches.cancel", () -> {
          jobs.cancel("batches/" + id);
          return Reply.json(Json.object());
        });
      }
      case "batches DELETE id" -> {
        return new Route("batches.delete", () -> {
          jobs.delete("batches/" + id);
          return Reply.json(Json.object());
        });
      }
      case "files GET id" -> {
        return new Route("files.get",
            () -> Reply.json(GeminiFiles.toJson(files.get("files/" + id), baseUrl.get(), version)));
      }
      case "files DELETE id" -> {
        return new Route("files.delete", () -> {
          files.delete("files/" + id);
          return Reply.json(Json.object());
        });
      }
      case "files GET download" -> {
        return new Route("files.download", () -> {
          GeminiFiles.StoredFile file = files.download("files/" + id);
          return Reply.bytes(file.mimeType(), file.data());
        });
      }
      default -> throw methodNotFound();
    }
  }

  private void authenticate(Request request) {
    String key = request.header("x-goog-api-key");
    if (key == null) {
      key = request.query("key").orElse(null);
    }
    if (key == null || key.isBlank()) {
      throw new HttpError(403, "PERMISSION_DENIED", "forbidden", "Method doesn't allow unregistered callers"
          + " (callers without established identity). Please use API Key or other form of API consumer identity to"
          + " call this API.");
    }
    if (apiKey != null && !apiKey.equals(key)) {
      throw new HttpError(400, "INVALID_ARGUMENT", "API_KEY_INVALID",
          "API key not valid. Please pass a valid API key.");
    }
  }

  private Reply generateContent(Request request, String version, String model) {
    ServedModels.Model answering = models.answering(modelId(model, version, "generateContent"), version,
        "generateContent");
    JsonNode body = Json.parse(request.body(maxRequestBytes));
    return Reply.json(ContentGenerator.generate(answering, body, behaviour.get()));
  }

  private Reply batchGenerateContent(Request request, String version, String model) {
    String modelId = modelId(model, version, "batchGenerateContent");
    models.answering(modelId, version, "batchGenerateContent"); // a model Google does not serve makes no job
    JsonNode body = Json.parse(request.body(maxRequestBytes));
    BatchRequest batch = BatchRequest.parse(body, files);
    BatchJob.Snapshot job = jobs.create("models/" + modelId, batch.displayName(), batch.inlinedRequests(),
        batch.inputFile(), batch.requestCount(), batch.webhookUris(), batch.webhookUserMetadata());
    return Reply.json(BatchResource.toJson(job));
  }

  private Reply listBatches(Request request) {
    long pageSize = request.longQuery("pageSize").orElse(0L);
    if (pageSize < 0) {
      throw invalid("page_size must not be negative.");
    }
    BatchJobs.Page page = jobs.list(pageSize == 0 ? DEFAULT_PAGE_SIZE : (int) Math.min(pageSize, 1000),
        request.query("pageToken").orElse(null));
    ObjectNode body = Json.object();
    if (!page.jobs().isEmpty()) {
      ArrayNode operations = body.putArray("operations");
      page.jobs().forEach(job -> operations.add(BatchResource.listed(job)));
    }
    if (page.nextPageToken() != null) {
      body.put("nextPageToken", page.nextPageToken());
    }
    return Reply.json(body);
  }

  /**
   * The resumable upload protocol, as the SDK speaks it (UploadClient): a {@code start} with the file's metadata
   * ({@code {"file":{"name"?,"displayName"?,"mimeType"?}}}) and {@code X-Goog-Upload-Header-Content-Length/-Type}
   * answers the upload URL; then chunks at {@code X-Goog-Upload-Offset}, the last with {@code upload, finalize}, which
   * answers {@code {"file":{...}}} with {@code X-Goog-Upload-Status: final}.
   */
  private Reply startUpload(Request request, String version) {
    JsonNode body = request.body(maxRequestBytes).length == 0 ? Json.object() : Json.parse(request.body());
    JsonNode file = body.path("file");
    long size = parseLong(request.header("X-Goog-Upload-Header-Content-Length"), -1);
    String mimeType = request.header("X-Goog-Upload-Header-Content-Type");
    if (mimeType == null && file.has("mimeType")) {
      mimeType = file.get("mimeType").asText();
    }
    GeminiFiles.Upload upload = files.start(file.path("name").asText(null), file.path("displayName").asText(null),
        mimeType, size);
    return Reply.empty()
        .withHeader("X-Goog-Upload-URL", baseUrl.get() + "/upload/" + version + "/files?upload_id=" + upload.id
            + "&upload_protocol=resumable")
        .withHeader("X-Goog-Upload-Status", "active")
        .withHeader("X-Goog-Upload-Chunk-Granularity", "8388608");
  }

  private Reply uploadChunk(Request request, String version) {
    List<String> commands = uploadCommands(request);
    if (commands.isEmpty()) {
      throw invalid("Only the resumable upload protocol is supported here (X-Goog-Upload-Command missing).");
    }
    String uploadId = request.query("upload_id").orElseThrow(() -> invalid("upload_id is required."));
    long offset = parseLong(request.header("X-Goog-Upload-Offset"), 0);
    GeminiFiles.StoredFile stored;
    try {
      stored = files.append(uploadId, offset, request.body(), commands.contains("finalize"));
    } catch (HttpError e) {
      // The upload service's own refusals end the upload and say so: the SDK reads this header before the status,
      // and without it sends the request again (UploadClient). The refusal comes as the body, as in
      // googleapis/python-genai#913 (a 409 read in place of the file).
      request.exchange().getResponseHeaders().set("X-Goog-Upload-Status", "final");
      throw e;
    }
    if (stored == null) {
      return Reply.empty().withHeader("X-Goog-Upload-Status", "active");
    }
    ObjectNode body = Json.object();
    body.set("file", GeminiFiles.toJson(stored, baseUrl.get(), version));
    return Reply.json(body).withHeader("X-Goog-Upload-Status", "final");
  }

  private static List<String> uploadCommands(Request request) {
    String command = request.header("X-Goog-Upload-Command");
    return command == null ? List.of()
        : List.of(command.toLowerCase(Locale.ROOT).replace(" ", "").split(","));
  }

  private static String modelId(String model, String version, String method) {
    if (model == null || !MODEL_ID.matcher(model).matches()) {
      throw HttpError.notFound("models/" + model + " is not found for API version " + version
          + ", or is not supported for " + method + ". Call ModelService.ListModels to see the list of available models"
          + " and their supported methods.");
    }
    return model;
  }

  private static long parseLong(String value, long fallback) {
    try {
      return value == null ? fallback : Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      throw invalid("Invalid number: " + value);
    }
  }

  private static HttpError invalid(String message) {
    return HttpError.badRequest("invalid", message);
  }

  private static HttpError methodNotFound() {
    return HttpError.notFound("Method not found.");
  }

  private static HttpError injectedFailure(int status) {
    return switch (status) {
      case 429 -> new HttpError(429, "RESOURCE_EXHAUSTED", "rateLimitExceeded",
          "Resource has been exhausted (e.g. check quota).");
      case 503 -> new HttpError(503, "UNAVAILABLE", "backendError", "The model is overloaded. Please try again later.");
      case 500 -> new HttpError(500, "INTERNAL", "backendError",
          "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting");
      default -> new HttpError(status, "UNKNOWN", "backendError", "Injected failure " + status + ".");
    };
  }

  @Override
  protected void renderError(HttpExchange exchange, HttpError error) {
    Responses.json(exchange, error.code() == 413 ? 400 : error.code(), errorBody(error));
  }

  /** {@code {"error":{"code","message","status"}}}, plus the ErrorInfo detail the API adds for a bad key. */
  static ObjectNode errorBody(HttpError error) {
    int code = error.code() == 413 ? 400 : error.code();
    ObjectNode body = Json.object();
    ObjectNode inner = body.putObject("error");
    inner.put("code", code);
    inner.put("message", error.getMessage());
    inner.put("status", error.status());
    if ("API_KEY_INVALID".equals(error.reason())) {
      ObjectNode info = inner.putArray("details").addObject();
      info.put("@type", "type.googleapis.com/google.rpc.ErrorInfo");
      info.put("reason", "API_KEY_INVALID");
      info.put("domain", "googleapis.com");
      info.putObject("metadata").put("service", "generativelanguage.googleapis.com");
    }
    return body;
  }
}
