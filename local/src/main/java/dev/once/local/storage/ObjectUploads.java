package dev.once.local.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.local.http.Request;
import dev.once.wire.http.Counters;
import dev.once.wire.http.HttpError;
import dev.once.wire.http.Json;
import dev.once.wire.http.Responses;
import dev.once.wire.storage.ObjectResource;
import dev.once.wire.storage.StoredObject;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The three upload protocols of the JSON API: {@code uploadType=media} (body = data, {@code name} in the query),
 * {@code multipart} (JSON metadata part, then the media part; what {@code Storage.create} sends, gzipped), and
 * {@code resumable} (a session, then chunks). A finished upload is a new generation and a finalize notification.
 * Each protocol is counted ({@code uploads.media|multipart|resumable}, {@code uploads.resumable.chunks}), so a test
 * can tell which one a client spoke.
 */
final class ObjectUploads {
  private final ObjectStore store;
  private final ResumableUploads sessions = new ResumableUploads();
  private final Notifier notifier;
  private final Counters counters;
  private final Supplier<String> baseUrl;
  private final long maxObjectBytes;

  ObjectUploads(ObjectStore store, Notifier notifier, Counters counters, Supplier<String> baseUrl,
      long maxObjectBytes) {
    this.store = store;
    this.notifier = notifier;
    this.counters = counters;
    this.baseUrl = baseUrl;
    this.maxObjectBytes = maxObjectBytes;
  }

  void upload(Request request, String bucket) {
    counters.increment("objects.insert");
    String type = request.query("uploadType").orElse("");
    Preconditions preconditions = Preconditions.from(request);
    String queryName = request.query("name").orElse(null);
    switch (type) {
      case "media" -> {
        counters.increment("uploads.media");
        if (queryName == null) {
          throw new HttpError(400, "INVALID_ARGUMENT", "required", "Required");
        }
        finish(request, bucket, ObjectMetadata.EMPTY.toNewObject(queryName, request.header("Content-Type"),
            request.body()), preconditions);
      }
      case "multipart" -> {
        counters.increment("uploads.multipart");
        List<Multipart.Part> parts = Multipart.parse(request.body(), request.header("Content-Type"));
        if (parts.size() != 2) {
          throw HttpError.badRequest("invalid", "A multipart upload has exactly two parts: metadata and media.");
        }
        ObjectMetadata metadata = ObjectMetadata.from(Json.parse(parts.get(0).body()));
        finish(request, bucket, metadata.toNewObject(queryName, parts.get(1).contentType(), parts.get(1).body()),
            preconditions);
      }
      case "resumable" -> {
        counters.increment("uploads.resumable");
        byte[] body = request.body();
        ObjectMetadata metadata = body.length == 0 ? ObjectMetadata.EMPTY : ObjectMetadata.from(Json.parse(body));
        String name = metadata.name() != null ? metadata.name() : queryName;
        ObjectStore.checkBucketName(bucket);
        ObjectStore.checkObjectName(name);
        ResumableUploads.Session session = sessions.open(bucket, queryName, request.header("X-Upload-Content-Type"),
            metadata, preconditions);
        request.exchange().getResponseHeaders().set("Location", baseUrl.get() + "/upload/storage/v1/b/" + bucket
            + "/o?uploadType=resumable&upload_id=" + session.id);
        Responses.empty(request.exchange(), 200);
      }
      default -> throw HttpError.badRequest("invalid", "Invalid upload type: '" + type + "'");
    }
  }

  void resumableChunk(Request request) {
    String id = request.query("upload_id").orElseThrow(() -> HttpError.notFound("Not Found"));
    ResumableUploads.Session session = sessions.get(id);
    counters.increment("uploads.resumable.chunks");
    byte[] body = request.body();
    ResumableUploads.Range range = ResumableUploads.parseRange(request.header("Content-Range"), body.length);
    synchronized (session) {
      long persisted = session.data.size();
      if (range.first() >= 0) {
        if (range.first() > persisted) {
          throw HttpError.badRequest("invalid", "Invalid request. According to the Content-Range header, the upload"
              + " offset is " + range.first() + " byte(s), which exceeds already uploaded size of " + persisted
              + " byte(s).");
        }
        int skip = (int) (persisted - range.first());
        if (skip < body.length) {
          if (persisted + body.length - skip > maxObjectBytes) {
            throw HttpError.tooLarge(maxObjectBytes);
          }
          session.data.write(body, skip, body.length - skip);
        }
      }
      long now = session.data.size();
      if (range.total() >= 0 && now > range.total()) {
        throw HttpError.badRequest("invalid", "The upload is larger than its declared size " + range.total() + ".");
      }
      if (range.finalizing(now)) {
        sessions.finish(session.id);
        byte[] data = session.data.toByteArray();
        NewObject object = session.metadata.toNewObject(session.queryName, session.contentType, data);
        Map<String, String> hashes = xGoogHash(request);
        object = new NewObject(object.name(), object.contentType(), object.metadata(), object.contentEncoding(),
            object.cacheControl(), object.contentDisposition(),
            object.expectedMd5() != null ? object.expectedMd5() : hashes.get("md5"),
            object.expectedCrc32c() != null ? object.expectedCrc32c() : hashes.get("crc32c"), data);
        finish(request, session.bucket, object, session.preconditions);
        return;
      }
      if (now > 0) {
        request.exchange().getResponseHeaders().set("Range", "bytes=0-" + (now - 1));
      }
      Responses.empty(request.exchange(), 308);
    }
  }

  /**
   * The checksums a client sends with the last chunk: {@code x-goog-hash: crc32c=…,md5=…} (Google's Node.js
   * client joins both in one header, the Java client sends {@code crc32c=…}; either may repeat the header).
   */
  static Map<String, String> xGoogHash(Request request) {
    Map<String, String> hashes = new HashMap<>();
    for (String header : request.exchange().getRequestHeaders().getOrDefault("x-goog-hash", List.of())) {
      for (String part : header.split(",")) {
        int eq = part.indexOf('=');
        if (eq > 0) {
          hashes.putIfAbsent(part.substring(0, eq).trim().toLowerCase(Locale.ROOT), part.substring(eq + 1).trim());
        }
      }
    }
    return hashes;
  }

  private void finish(Request request, String bucket, NewObject object, Preconditions preconditions) {
    StoredObject stored = store.write(bucket, object, preconditions);
    ObjectNode json = ObjectResource.toJson(stored, baseUrl.get());
    notifier.finalized(stored, Json.text(json));
    Responses.json(request.exchange(), 200, json);
  }
}
