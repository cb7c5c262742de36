package dev.once.local.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import dev.once.local.http.AdminRoutes;
import dev.once.local.http.ApiHandler;
import dev.once.local.http.Faults;
import dev.once.local.http.Request;
import dev.once.wire.http.Counters;
import dev.once.wire.http.HttpError;
import dev.once.wire.http.Json;
import dev.once.wire.http.Responses;
import dev.once.wire.storage.ObjectResource;
import dev.once.wire.storage.StoredObject;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The routes of the Cloud Storage JSON API subset that {@code google-cloud-storage} uses over HTTP: uploads
 * (served by {@link ObjectUploads}), object metadata, media download (also of a past generation, with ranges),
 * delete, list, and bucket insert/get/list. Requests under {@code /_admin/} go to the admin handler instead.
 */
final class StorageApi extends ApiHandler {
  private static final Pattern RANGE = Pattern.compile("bytes=(\\d*)-(\\d*)");

  private final ObjectStore store;
  private final ObjectUploads uploads;
  private final Counters counters;
  private final Faults faults;
  private final AdminRoutes admin;
  private final Supplier<String> baseUrl;

  StorageApi(ObjectStore store, Notifier notifier, Counters counters, Faults faults, AdminRoutes.Own admin,
      Supplier<String> baseUrl, long maxObjectBytes) {
    super(maxObjectBytes);
    this.store = store;
    this.uploads = new ObjectUploads(store, notifier, counters, baseUrl, maxObjectBytes);
    this.counters = counters;
    this.faults = faults;
    this.admin = new AdminRoutes(counters, faults, admin);
    this.baseUrl = baseUrl;
  }

  @Override
  protected void serve(Request request) {
    List<String> path = request.segments();
    if (!path.isEmpty() && path.get(0).equals("_admin")) {
      admin.serve(request, path.subList(1, path.size()));
      return;
    }
    counters.increment("requests");
    faults.inject(counters, "requests", StorageApi::injectedFailure);
    route(request, jsonApiPath(resumablePath(path)));
  }

  /**
   * Cloud Storage also takes uploads under {@code /resumable/upload/storage/v1/...}, the resumable path of the API's
   * discovery document: gcloud (apitools) starts every resumable upload there.
   */
  private static List<String> resumablePath(List<String> path) {
    return startsWith(path, "resumable", "upload") ? path.subList(1, path.size()) : path;
  }

  /**
   * The JSON API lives under {@code /storage/v1}; Google's Node.js client, given {@code STORAGE_EMULATOR_HOST},
   * uses that value as the JSON API root itself and asks for {@code /b/{bucket}/o/...} (its uploads still go to
   * {@code /upload/storage/v1/...}). Both spellings are served, as Google's client libraries need.
   */
  private static List<String> jsonApiPath(List<String> path) {
    if (!path.isEmpty() && path.get(0).equals("b")) {
      List<String> full = new ArrayList<>(List.of("storage", "v1"));
      full.addAll(path);
      return full;
    }
    return path;
  }

  private void route(Request request, List<String> path) {
    String method = request.method();
    int size = path.size();
    if (startsWith(path, "upload", "storage", "v1", "b") && size == 6 && path.get(5).equals("o")) {
      String bucket = path.get(4);
      if (method.equals("POST") && request.query("upload_id").isEmpty()) {
        uploads.upload(request, bucket);
        return;
      }
      if (method.equals("PUT") || method.equals("POST")) {
        uploads.resumableChunk(request);
        return;
      }
    }
    if (startsWith(path, "download", "storage", "v1", "b") && size >= 7 && path.get(5).equals("o")
        && method.equals("GET")) {
      media(request, path.get(4), objectName(path, 6));
      return;
    }
    if (startsWith(path, "storage", "v1", "b")) {
      if (size == 3 && method.equals("POST")) {
        insertBucket(request);
        return;
      }
      if (size == 3 && method.equals("GET")) {
        listBuckets(request);
        return;
      }
      if (size == 4 && method.equals("GET")) {
        getBucket(request, path.get(3));
        return;
      }
      if (size == 5 && path.get(4).equals("o") && method.equals("GET")) {
        list(request, path.get(3));
        return;
      }
      if (size >= 6 && path.get(4).equals("o")) {
        String bucket = path.get(3);
        String name = objectName(path, 5);
        switch (method) {
          case "GET" -> {
            if ("media".equals(request.query("alt").orElse(null))) {
              media(request, bucket, name);
            } else {
              metadata(request, bucket, name);
            }
            return;
          }
          case "DELETE" -> {
            delete(request, bucket, name);
            return;
          }
          default -> {}
        }
      }
    }
    throw HttpError.notFound("Not Found");
  }

  private void metadata(Request request, String bucket, String name) {
    counters.increment("objects.get");
    StoredObject found = store.read(bucket, name, request.longQuery("generation").orElse(null),
        Preconditions.from(request));
    Responses.json(request.exchange(), 200, ObjectResource.toJson(found, baseUrl.get()));
  }

  private void media(Request request, String bucket, String name) {
    counters.increment("objects.download");
    StoredObject found = store.read(bucket, name, request.longQuery("generation").orElse(null),
        Preconditions.from(request));
    byte[] data = found.data();
    long first = 0;
    long last = data.length - 1L;
    boolean partial = false;
    String rangeHeader = request.header("Range");
    if (rangeHeader != null && data.length > 0) {
      Matcher m = RANGE.matcher(rangeHeader.trim());
      if (m.matches() && !(m.group(1).isEmpty() && m.group(2).isEmpty())) {
        if (m.group(1).isEmpty()) {
          first = Math.max(0, data.length - Long.parseLong(m.group(2)));
        } else {
          first = Long.parseLong(m.group(1));
          if (!m.group(2).isEmpty()) {
            last = Math.min(last, Long.parseLong(m.group(2)));
          }
        }
        if (first >= data.length) {
          throw new HttpError(416, "OUT_OF_RANGE", "requestedRangeNotSatisfiable",
              "Request range not satisfiable");
        }
        partial = first != 0 || last != data.length - 1L;
      }
    }
    HttpExchange exchange = request.exchange();
    Headers headers = exchange.getResponseHeaders();
    headers.set("Content-Type", found.contentType());
    headers.set("ETag", found.etag());
    headers.set("x-goog-generation", Long.toString(found.generation()));
    headers.set("x-goog-metageneration", Long.toString(found.metageneration()));
    headers.set("x-goog-stored-content-length", Long.toString(found.size()));
    headers.set("x-goog-stored-content-encoding",
        found.contentEncoding() == null ? "identity" : found.contentEncoding());
    headers.set("x-goog-storage-class", "STANDARD");
    headers.add("x-goog-hash", "crc32c=" + found.crc32c());
    headers.add("x-goog-hash", "md5=" + found.md5Hash());
    if (partial) {
      headers.set("Content-Range", "bytes " + first + "-" + last + "/" + data.length);
    }
    byte[] slice = partial ? Arrays.copyOfRange(data, (int) first, (int) last + 1) : data;
    try {
      exchange.sendResponseHeaders(partial ? 206 : 200, slice.length == 0 ? -1 : slice.length);
      if (slice.length > 0) {
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(slice);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void delete(Request request, String bucket, String name) {
    counters.increment("objects.delete");
    store.delete(bucket, name, request.longQuery("generation").orElse(null), Preconditions.from(request));
    Responses.empty(request.exchange(), 204);
  }

  private void list(Request request, String bucket) {
    counters.increment("objects.list");
    int maxResults = (int) Math.min(1000, Math.max(1, request.longQuery("maxResults").orElse(1000L)));
    ObjectStore.ListPage page = store.list(bucket, new ObjectStore.ListQuery(
        request.query("prefix").orElse(null), request.query("delimiter").orElse(null),
        Boolean.parseBoolean(request.query("versions").orElse("false")), request.query("startOffset").orElse(null),
        request.query("endOffset").orElse(null), maxResults, request.query("pageToken").orElse(null)));
    ObjectNode json = Json.object();
    json.put("kind", "storage#objects");
    if (!page.prefixes().isEmpty()) {
      ArrayNode prefixes = json.putArray("prefixes");
      page.prefixes().forEach(prefixes::add);
    }
    if (!page.items().isEmpty()) {
      ArrayNode items = json.putArray("items");
      page.items().forEach(o -> items.add(ObjectResource.toJson(o, baseUrl.get())));
    }
    if (page.nextPageToken() != null) {
      json.put("nextPageToken", page.nextPageToken());
    }
    Responses.json(request.exchange(), 200, json);
  }

  private void insertBucket(Request request) {
    counters.increment("buckets.insert");
    JsonNode body = Json.parse(request.body());
    String name = body.path("name").isTextual() ? body.get("name").asText() : null;
    if (name == null) {
      throw new HttpError(400, "INVALID_ARGUMENT", "required", "Required");
    }
    Responses.json(request.exchange(), 200, BucketResource.toJson(name, store.createBucket(name), baseUrl.get()));
  }

  /** {@code buckets.list} ({@code gcloud storage ls}): GCS requires the project; the stand-in has one, so all of them. */
  private void listBuckets(Request request) {
    counters.increment("buckets.list");
    request.required("project");
    ObjectNode json = Json.object();
    json.put("kind", "storage#buckets");
    var buckets = store.bucketsCreated();
    if (!buckets.isEmpty()) {
      ArrayNode items = json.putArray("items");
      buckets.forEach((name, created) -> items.add(BucketResource.toJson(name, created, baseUrl.get())));
    }
    Responses.json(request.exchange(), 200, json);
  }

  private void getBucket(Request request, String bucket) {
    counters.increment("buckets.get");
    var created = store.bucketCreated(bucket)
        .orElseThrow(() -> HttpError.notFound("The specified bucket does not exist."));
    Responses.json(request.exchange(), 200, BucketResource.toJson(bucket, created, baseUrl.get()));
  }

  @Override
  protected void renderError(HttpExchange exchange, HttpError error) {
    if (error.code() == 304) {
      Responses.empty(exchange, 304);
      return;
    }
    Responses.json(exchange, error.code(), errorBody(error));
  }

  /** The JSON API error shape: code, message, and the legacy {@code errors[]} with domain and reason. */
  static ObjectNode errorBody(HttpError error) {
    ObjectNode body = Json.object();
    ObjectNode inner = body.putObject("error");
    inner.put("code", error.code());
    inner.put("message", error.getMessage());
    ObjectNode detail = inner.putArray("errors").addObject();
    detail.put("message", error.getMessage());
    detail.put("domain", "global");
    detail.put("reason", error.reason());
    return body;
  }

  private static HttpError injectedFailure(int status) {
    return switch (status) {
      case 429 -> new HttpError(429, "RESOURCE_EXHAUSTED", "rateLimitExceeded",
          "The rate of change requests to the object exceeds the rate limit. Please reduce the rate of create, update,"
              + " and delete requests.");
      case 503 -> new HttpError(503, "UNAVAILABLE", "backendError", "Backend Error");
      default -> new HttpError(status, "INTERNAL", "backendError", "Injected failure " + status);
    };
  }

  /** An object name may contain '/': it arrives encoded as one segment, but tolerate unencoded ones too. */
  private static String objectName(List<String> path, int from) {
    return String.join("/", path.subList(from, path.size()));
  }

  private static boolean startsWith(List<String> path, String... prefix) {
    if (path.size() < prefix.length) {
      return false;
    }
    for (int i = 0; i < prefix.length; i++) {
      if (!path.get(i).equals(prefix[i])) {
        return false;
      }
    }
    return true;
  }
}
