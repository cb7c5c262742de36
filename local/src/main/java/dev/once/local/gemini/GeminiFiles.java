package dev.once.local.gemini;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.local.http.HttpError;
import dev.once.local.http.Json;
import java.io.ByteArrayOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Files API subset a file-based batch needs: resumable upload ({@code upload/v1beta/files}, the protocol the
 * SDK's {@code files.upload} speaks), get, and {@code files/{id}:download?alt=media}, which is also how a batch's
 * {@code responsesFile} is fetched.
 */
final class GeminiFiles {
  /** One stored file; {@code source} is UPLOADED or GENERATED (batch output). */
  record StoredFile(String name, String displayName, String mimeType, byte[] data, Instant createTime, String source) {}

  /** An upload in progress: bytes arrive in order at the offsets the client names. */
  static final class Upload {
    final String id;
    final String displayName;
    final String mimeType;
    final long declaredSize;
    final ByteArrayOutputStream data = new ByteArrayOutputStream();

    Upload(String id, String displayName, String mimeType, long declaredSize) {
      this.id = id;
      this.displayName = displayName;
      this.mimeType = mimeType;
      this.declaredSize = declaredSize;
    }
  }

  private final Map<String, StoredFile> files = new ConcurrentHashMap<>();
  private final Map<String, Upload> uploads = new ConcurrentHashMap<>();
  private final long maxUploadBytes;

  GeminiFiles(long maxUploadBytes) {
    this.maxUploadBytes = maxUploadBytes;
  }

  Upload start(String displayName, String mimeType, long declaredSize) {
    if (mimeType == null || mimeType.isBlank()) {
      throw HttpError.badRequest("invalid", "Unknown mime type: please set X-Goog-Upload-Header-Content-Type.");
    }
    if (declaredSize > maxUploadBytes) {
      throw HttpError.badRequest("invalid", "Request payload size exceeds the limit: " + maxUploadBytes + " bytes.");
    }
    Upload upload = new Upload(Ids.random(24), displayName, mimeType, declaredSize);
    uploads.put(upload.id, upload);
    return upload;
  }

  /** Appends a chunk at {@code offset}; returns the stored file once {@code finalize} is set, else null. */
  StoredFile append(String uploadId, long offset, byte[] chunk, boolean finalize) {
    Upload upload = uploads.get(uploadId);
    if (upload == null) {
      throw HttpError.notFound("Upload session not found.");
    }
    synchronized (upload) {
      if (offset != upload.data.size()) {
        throw HttpError.badRequest("invalid", "Upload offset " + offset + " does not match the " + upload.data.size()
            + " bytes received so far.");
      }
      if (upload.data.size() + (long) chunk.length > maxUploadBytes) {
        throw HttpError.badRequest("invalid", "Request payload size exceeds the limit: " + maxUploadBytes + " bytes.");
      }
      upload.data.writeBytes(chunk);
      if (!finalize) {
        return null;
      }
      uploads.remove(uploadId);
      return put(upload.displayName, upload.mimeType, upload.data.toByteArray(), "UPLOADED");
    }
  }

  StoredFile put(String displayName, String mimeType, byte[] data, String source) {
    StoredFile file = new StoredFile("files/" + Ids.random(12), displayName, mimeType, data,
        Instant.now().truncatedTo(ChronoUnit.MILLIS), source);
    files.put(file.name(), file);
    return file;
  }

  StoredFile get(String name) {
    StoredFile file = files.get(name);
    if (file == null) {
      throw new HttpError(403, "PERMISSION_DENIED", "forbidden",
          "You do not have permission to access the File " + name.substring("files/".length())
              + " or it may not exist.");
    }
    return file;
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
    json.put("expirationTime", file.createTime().plus(Duration.ofHours(48)).toString());
    json.put("sha256Hash", sha256(file.data()));
    json.put("uri", baseUrl + "/" + version + "/" + file.name());
    json.put("downloadUri", baseUrl + "/" + version + "/" + file.name() + ":download?alt=media");
    json.put("state", "ACTIVE");
    json.put("source", file.source());
    return json;
  }

  private static String sha256(byte[] data) {
    try {
      return Base64.getEncoder().encodeToString(MessageDigest.getInstance("SHA-256").digest(data));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
