package dev.once.wire.http;

/**
 * An HTTP failure a stand-in answers with. Each stand-in renders it in its own service's error shape; the fields
 * cover both Google shapes: the canonical {@code status} (Gemini, gRPC style) and the legacy {@code reason}
 * (Cloud Storage JSON API).
 */
public final class HttpError extends RuntimeException {
  private final int code;
  private final String status;
  private final String reason;

  public HttpError(int code, String status, String reason, String message) {
    super(message, null, false, false);
    this.code = code;
    this.status = status;
    this.reason = reason;
  }

  public static HttpError badRequest(String reason, String message) {
    return new HttpError(400, "INVALID_ARGUMENT", reason, message);
  }

  public static HttpError notFound(String message) {
    return new HttpError(404, "NOT_FOUND", "notFound", message);
  }

  public static HttpError tooLarge(long limit) {
    return new HttpError(
        413, "INVALID_ARGUMENT", "uploadTooLarge", "Request payload size exceeds the limit: " + limit + " bytes.");
  }

  public int code() {
    return code;
  }

  public String status() {
    return status;
  }

  public String reason() {
    return reason;
  }
}
