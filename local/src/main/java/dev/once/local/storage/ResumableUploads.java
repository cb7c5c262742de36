package dev.once.local.storage;

import dev.once.wire.http.HttpError;
import java.io.ByteArrayOutputStream;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Resumable upload sessions ({@code uploadType=resumable}): the session URL takes chunks with a
 * {@code Content-Range}; a non-final chunk is acknowledged with 308 and a {@code Range} header, the final one
 * creates the object. This is what {@code Storage.writer()} and {@code createFrom()} speak.
 */
final class ResumableUploads {
  private static final Pattern CONTENT_RANGE = Pattern.compile("bytes (\\*|(\\d+)-(\\d+|\\*))/(\\*|\\d+)");

  /** An open session; {@code data} only grows. */
  static final class Session {
    final String id;
    final String bucket;
    final String queryName;
    final String contentType;
    final ObjectMetadata metadata;
    final Preconditions preconditions;
    final ByteArrayOutputStream data = new ByteArrayOutputStream();

    Session(String id, String bucket, String queryName, String contentType, ObjectMetadata metadata,
        Preconditions preconditions) {
      this.id = id;
      this.bucket = bucket;
      this.queryName = queryName;
      this.contentType = contentType;
      this.metadata = metadata;
      this.preconditions = preconditions;
    }
  }

  /**
   * The parsed {@code Content-Range} of a chunk: {@code first} is -1 for a bare status query; total -1 if unknown.
   * {@code toEnd} is the open form {@code bytes F-*}{@code /T} Google's Node.js client sends when it streams the
   * rest of an upload in one request: the body runs to the end of the object, so with an unknown total the end of
   * this request finalizes it.
   */
  record Range(long first, long last, long total, boolean toEnd) {
    boolean finalizing(long persistedAfter) {
      return total >= 0 ? persistedAfter == total : toEnd;
    }
  }

  private final Map<String, Session> sessions = new ConcurrentHashMap<>();

  Session open(String bucket, String queryName, String contentType, ObjectMetadata metadata,
      Preconditions preconditions) {
    Session session = new Session(UUID.randomUUID().toString().replace("-", ""), bucket, queryName, contentType,
        metadata, preconditions);
    sessions.put(session.id, session);
    return session;
  }

  Session get(String id) {
    Session session = sessions.get(id);
    if (session == null) {
      throw HttpError.notFound("No such upload session: " + id);
    }
    return session;
  }

  void finish(String id) {
    sessions.remove(id);
  }

  static Range parseRange(String header, int bodyLength) {
    if (header == null) {
      // A single PUT without Content-Range carries the whole object.
      return new Range(0, bodyLength - 1L, bodyLength, true);
    }
    Matcher m = CONTENT_RANGE.matcher(header.trim());
    if (!m.matches()) {
      throw HttpError.badRequest("invalid", "Invalid Content-Range: " + header);
    }
    long total = m.group(4).equals("*") ? -1 : Long.parseLong(m.group(4));
    if (m.group(1).equals("*")) {
      return new Range(-1, -1, total, false);
    }
    long first = Long.parseLong(m.group(2));
    if (m.group(3).equals("*")) {
      return new Range(first, first + bodyLength - 1L, total, true);
    }
    long last = Long.parseLong(m.group(3));
    if (last < first || last - first + 1 != bodyLength) {
      throw HttpError.badRequest("invalid", "Content-Range " + header + " does not match a body of " + bodyLength
          + " bytes.");
    }
    return new Range(first, last, total, false);
  }
}
