package dev.once.local.gemini;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.wire.http.HttpError;
import dev.once.wire.http.Json;
import java.io.ByteArrayOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The Files API subset a file-based batch needs: resumable upload ({@code upload/v1beta/files}, the protocol the
 * SDK's {@code files.upload} speaks), get, delete, and {@code files/{id}:download?alt=media}, which is also how a
 * batch's {@code responsesFile} is fetched. With the API's limits and answers:
 * <ul>
 *   <li>"up to 20 GB of files per project, with a per-file maximum size of 2 GB" (ai.google.dev/gemini-api/docs/files);
 *       over the project's storage, 429 RESOURCE_EXHAUSTED on quota {@code FileStorageBytesPerProject}, value
 *       21474836480 (the answer quoted in googleapis/python-genai#1172 and alphaXiv/feedback#16).
 *   <li>A name chosen by the caller: "The ID (name excluding the "files/" prefix) can contain up to 40 characters that
 *       are lowercase alphanumeric or dashes (-). The ID cannot start or end with a dash." (File resource,
 *       ai.google.dev/api/files). One already taken is refused 409 "{id} already exists." on the upload's last
 *       request, after its bytes were sent (googleapis/python-genai#913).
 *   <li>A batch's responses file is named {@code files/batch-} and 36 characters, 42 in all, which files.get refuses
 *       ("File ID (name excluding 'files/') cannot be more than 40 characters", googleapis/go-genai#436) while its
 *       download works.
 * </ul>
 */
final class GeminiFiles {
  /** "a per-file maximum size of 2 GB". */
  static final long MAX_FILE_BYTES = 2L * 1024 * 1024 * 1024;
  /** "up to 20 GB of files per project": FileStorageBytesPerProject's quota value. */
  static final long MAX_PROJECT_BYTES = 21_474_836_480L;
  private static final int MAX_ID_LENGTH = 40;
  private static final Pattern ID = Pattern.compile("[a-z0-9]([a-z0-9-]*[a-z0-9])?");
  private static final Duration RETENTION = Duration.ofHours(48);

  /** One stored file; {@code source} is UPLOADED or GENERATED (batch output). */
  record StoredFile(String name, String displayName, String mimeType, byte[] data, Instant createTime, String source) {}

  /** An upload in progress: bytes arrive in order at the offsets the client names. */
  static final class Upload {
    final String id;
    final String name;
    final String displayName;
    final String mimeType;
    final long declaredSize;
    final ByteArrayOutputStream data = new ByteArrayOutputStream();

    Upload(String id, String name, String displayName, String mimeType, long declaredSize) {
      this.id = id;
      this.name = name;
      this.displayName = displayName;
      this.mimeType = mimeType;
      this.declaredSize = declaredSize;
    }
  }

  private final Map<String, StoredFile> files = new ConcurrentHashMap<>();
  private final Map<String, Upload> uploads = new ConcurrentHashMap<>();
  /** Finished uploads: a repeated last request (its answer was lost) gets the file again, as resumable uploads do. */
  private final Map<String, StoredFile> finished = new ConcurrentHashMap<>();
  private final long maxFileBytes;
  private final long maxProjectBytes;

  GeminiFiles(long maxFileBytes, long maxProjectBytes) {
    this.maxFileBytes = maxFileBytes;
    this.maxProjectBytes = maxProjectBytes;
  }

  /** The upload's first request: its metadata (a name of the caller's, or none) and declared size. */
  Upload start(String name, String displayName, String mimeType, long declaredSize) {
    if (name != null) {
      checkId(name, "CreateFileRequest.file.name");
    }
    if (mimeType == null || mimeType.isBlank()) {
      throw HttpError.badRequest("invalid", "Unknown mime type: please set X-Goog-Upload-Header-Content-Type.");
    }
    if (declaredSize > maxFileBytes) {
      throw HttpError.badRequest("invalid", "Request payload size exceeds the limit: " + maxFileBytes + " bytes.");
    }
    checkQuota(Math.max(declaredSize, 0));
    Upload upload = new Upload(Ids.random(24), name, displayName, mimeType, declaredSize);
    uploads.put(upload.id, upload);
    return upload;
  }

  /**
   * Appends a chunk at {@code offset}; returns the stored file once {@code finalize} is set, else null. The last
   * request sent again to a finished upload answers the file it stored.
   */
  StoredFile append(String uploadId, long offset, byte[] chunk, boolean finalize) {
    StoredFile done = finished.get(uploadId);
    if (done != null && finalize) {
      return done;
    }
    Upload upload = uploads.get(uploadId);
    if (upload == null) {
      throw HttpError.notFound("Upload session not found.");
    }
    synchronized (upload) {
      if (offset != upload.data.size()) {
        throw HttpError.badRequest("invalid", "Upload offset " + offset + " does not match the " + upload.data.size()
            + " bytes received so far.");
      }
      if (upload.data.size() + (long) chunk.length > maxFileBytes) {
        throw HttpError.badRequest("invalid", "Request payload size exceeds the limit: " + maxFileBytes + " bytes.");
      }
      upload.data.writeBytes(chunk);
      if (!finalize) {
        return null;
      }
      uploads.remove(uploadId);
      if (upload.declaredSize >= 0 && upload.data.size() != upload.declaredSize) {
        throw HttpError.badRequest("invalid", "The upload ended after " + upload.data.size() + " bytes, not the "
            + upload.declaredSize + " of its X-Goog-Upload-Header-Content-Length.");
      }
      String name = upload.name == null ? "files/" + Ids.random(12) : upload.name;
      StoredFile stored = store(new StoredFile(name, upload.displayName, upload.mimeType, upload.data.toByteArray(),
          now(), "UPLOADED"));
      finished.put(uploadId, stored);
      return stored;
    }
  }

  /** A batch's responses file, named as Gemini names them: {@code files/batch-} and 36 characters. */
  StoredFile putGenerated(String displayName, String mimeType, byte[] data) {
    return store(new StoredFile("files/batch-" + Ids.random(36), displayName, mimeType, data, now(), "GENERATED"));
  }

  private synchronized StoredFile store(StoredFile file) {
    checkQuota(file.data().length);
    if (files.putIfAbsent(file.name(), file) != null) {
      throw new HttpError(409, "ALREADY_EXISTS", "conflict", id(file.name()) + " already exists.");
    }
    return file;
  }

  /** The file by its name: for files.get, a batch's input, and a download (which skips the name's check). */
  StoredFile get(String name) {
    checkId(name, "GetFileRequest.name");
    return find(name);
  }

  StoredFile download(String name) {
    return find(name);
  }

  void delete(String name) {
    checkId(name, "DeleteFileRequest.name");
    find(name);
    files.remove(name);
    finished.values().removeIf(file -> file.name().equals(name)); // nor held for a repeated last request
  }

  List<String> names() {
    return List.copyOf(files.keySet());
  }

  long storedBytes() {
    return files.values().stream().mapToLong(f -> f.data().length).sum();
  }

  private StoredFile find(String name) {
    StoredFile file = files.get(name);
    if (file == null) {
      throw new HttpError(403, "PERMISSION_DENIED", "forbidden",
          "You do not have permission to access the File " + id(name) + " or it may not exist.");
    }
    return file;
  }

  private void checkQuota(long adding) {
    if (storedBytes() + adding > maxProjectBytes) {
      throw new HttpError(429, "RESOURCE_EXHAUSTED", "rateLimitExceeded", "You exceeded your current quota, please"
          + " check your plan and billing details. For more information on this error, head to:"
          + " https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric:"
          + " generativelanguage.googleapis.com/file_storage_bytes, limit: " + maxProjectBytes);
    }
  }

  private static void checkId(String name, String field) {
    String id = id(name);
    if (id.length() > MAX_ID_LENGTH) {
      throw HttpError.badRequest("invalid", "* " + field + ": File ID (name excluding 'files/') cannot be more than "
          + MAX_ID_LENGTH + " characters.\n");
    }
    if (!name.startsWith("files/") || !ID.matcher(id).matches()) {
      throw HttpError.badRequest("invalid", "* " + field + ": File name may only contain lowercase alphanumeric"
          + " characters or dashes (-) and cannot begin or end with a dash.\n");
    }
  }

  private static String id(String name) {
    return name.startsWith("files/") ? name.substring("files/".length()) : name;
  }

  private static Instant now() {
    return Instant.now().truncatedTo(ChronoUnit.MILLIS);
  }

  static ObjectNode toJson(StoredFile file, String baseUrl, String version) {
    ObjectNode json = Json.object();
    json.put("name", file.name());
    if (file.displayName() != null) {
      json.put("displayName", file.displayName());
    }
    json.put("mimeType", file.mimeType());
    json.put("sizeBytes", Long.toString(file.data().length));
    json.put("createTime", file.createTime().toString());
    json.put("updateTime", file.createTime().toString());
    json.put("expirationTime", file.createTime().plus(RETENTION).toString());
    json.put("sha256Hash", sha256(file.data()));
    json.put("uri", baseUrl + "/" + version + "/" + file.name());
    json.put("downloadUri", baseUrl + "/" + version + "/" + file.name() + ":download?alt=media");
    json.put("state", "ACTIVE");
    json.put("source", file.source());
    return json;
  }

  /** The File's sha256Hash: the SHA-256 of its bytes, base64 ("bytes format" fields are base64 in JSON). */
  static String sha256(byte[] data) {
    try {
      return Base64.getEncoder().encodeToString(MessageDigest.getInstance("SHA-256").digest(data));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
