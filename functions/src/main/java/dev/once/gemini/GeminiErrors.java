package dev.once.gemini;

import com.google.genai.errors.ApiException;
import dev.once.observe.ForeignText;
import java.util.List;
import java.util.Locale;
import java.util.OptionalInt;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a Gemini failure means for the document and for the bill.
 *
 * <ul>
 *   <li><b>The document's fault</b> (refused for good, never retried): a 413, or a 400 INVALID_ARGUMENT whose message
 *       is about the document's own content or size ("payload size exceeds the limit", "the input token count
 *       exceeds the maximum", "no pages", "Unable to process input image"). Any other 400 — a generic "Request
 *       contains an invalid argument", a schema or model the request configures, a bad key — is a configuration
 *       problem a fixed deployment does not have, so no document is lost to it: it is retried and alerted.
 *   <li><b>Refused before any work</b> (nothing billed, so the try does not use up the cap): any 4xx, Google answering
 *       the request without generating (429 RESOURCE_EXHAUSTED among them), and 503 UNAVAILABLE, which the API
 *       answers before generation when a model is overloaded. A timeout, a reset, a 500 or 504 may have come after
 *       tokens were generated and billed: those count. This is about a generateContent's bill only.
 *   <li><b>Certainly not created</b> (batches.create): far fewer answers prove that no job exists
 *       ({@link #certainlyNotCreated}); a 503 or a 429 does not.
 * </ul>
 */
public final class GeminiErrors {
  /** Words of Gemini's messages about the document itself. */
  private static final List<String> ABOUT_THE_DOCUMENT = List.of("payload size", "too large", "exceeds the limit",
      "token count", "exceeds the maximum number of tokens", "no pages", "unable to process input image",
      "image is not valid", "document size", "password", "corrupt");
  /** Words of messages about what the request configures: never the document's fault, whatever else they say. */
  private static final List<String> ABOUT_THE_CONFIGURATION = List.of("api key", "api_key", "schema", "model",
      "generation_config", "generationconfig", "mime_type", "mimetype", "field");

  /** The statuses of a 400 that refuse batches.create outright ({@link #certainlyNotCreated}). */
  private static final Set<String> CREATE_REFUSALS_400 =
      Set.of("INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE");

  private GeminiErrors() {}

  public static boolean isPermanent(Throwable error) {
    ApiException api = api(error);
    return api != null && isPermanent(api.code(), api.status(), api.message());
  }

  /** The rule of {@link #isPermanent(Throwable)} on a failure's HTTP code, status and message, whatever carried it. */
  static boolean isPermanent(int code, String status, String message) {
    if (code == 413) {
      return true;
    }
    String words = String.valueOf(message).toLowerCase(Locale.ROOT);
    return code == 400 && "INVALID_ARGUMENT".equals(status)
        && ABOUT_THE_DOCUMENT.stream().anyMatch(words::contains)
        && ABOUT_THE_CONFIGURATION.stream().noneMatch(words::contains);
  }

  /** Words of a refusal about a request's size, not its content. */
  private static final List<String> ABOUT_THE_SIZE = List.of("payload size", "too large", "exceeds the limit");
  /** How a refusal names one request of a batch: its field path ({@code …requests.requests[3].request…}). */
  private static final Pattern NAMED_REQUEST =
      Pattern.compile("requests\\.requests\\[(\\d{1,9})]");

  /**
   * batches.create refused the job for its size: a 413, or a 400 INVALID_ARGUMENT "Request payload size exceeds the
   * limit" (a job a little over the inline limit). The job's fault, not its documents': none of them is refused for it.
   */
  public static boolean tooLarge(Throwable error) {
    ApiException api = api(error);
    if (api == null) {
      return false;
    }
    String message = String.valueOf(api.message()).toLowerCase(Locale.ROOT);
    return api.code() == 413 || api.code() == 400 && "INVALID_ARGUMENT".equals(api.status())
        && ABOUT_THE_SIZE.stream().anyMatch(message::contains);
  }

  /**
   * The one request of a batch that batches.create refused, when its refusal names it (400 INVALID_ARGUMENT with the
   * request's field path, as the API names a bad field: "* BatchGenerateContentRequest.batch.input_config.requests
   * .requests[3].request: …"); empty for a refusal of the whole job.
   */
  public static OptionalInt refusedRequest(Throwable error) {
    ApiException api = api(error);
    if (api == null || api.code() != 400 || !"INVALID_ARGUMENT".equals(api.status())) {
      return OptionalInt.empty();
    }
    Matcher named = NAMED_REQUEST.matcher(String.valueOf(api.message()));
    OptionalInt index = OptionalInt.empty();
    while (named.find()) {
      int found = Integer.parseInt(named.group(1));
      if (index.isPresent() && index.getAsInt() != found) {
        return OptionalInt.empty(); // several requests named: the job's refusal, not one document's
      }
      index = OptionalInt.of(found);
    }
    return index;
  }

  /** Google answered without doing the work (nothing generated, nothing billed). */
  public static boolean refusedBeforeWork(Throwable error) {
    ApiException api = api(error);
    return api != null && (api.code() >= 400 && api.code() < 500 || api.code() == 503);
  }

  /**
   * batches.create answered that it made nothing. Only a refusal whose canonical meaning rules out the job (the
   * status text must match the code: a bare 4xx from a proxy proves nothing): INVALID_ARGUMENT, "arguments that are
   * problematic regardless of the state of the system"; FAILED_PRECONDITION and OUT_OF_RANGE, "the operation was
   * rejected"; UNAUTHENTICATED and PERMISSION_DENIED, no caller allowed to execute it; NOT_FOUND, the model it would be
   * made under does not exist (google.rpc.Code, googleapis/google/rpc/code.proto). Nothing else is proof:
   * RESOURCE_EXHAUSTED says nothing of what was done, UNAVAILABLE is "not always safe to retry" for a non-idempotent
   * call (code.proto again) and may come from a front end while the backend goes on, DEADLINE_EXCEEDED "may be
   * returned even if the operation has completed successfully", and an answer lost to a timeout or a reset says
   * nothing at all. Those count as tries that may have made a job, so the retry looks for it first.
   */
  public static boolean certainlyNotCreated(Throwable error) {
    ApiException api = api(error);
    if (api == null) {
      return false;
    }
    return switch (api.code()) {
      case 400 -> CREATE_REFUSALS_400.contains(String.valueOf(api.status()));
      case 401 -> "UNAUTHENTICATED".equals(api.status());
      case 403 -> "PERMISSION_DENIED".equals(api.status());
      case 404 -> "NOT_FOUND".equals(api.status());
      default -> false;
    };
  }

  /**
   * Google does not serve the model a call named: a 404 NOT_FOUND answered to a call on {@code models/NAME}
   * (generateContent, countTokens, batchGenerateContent), whatever its words ("This model models/… is no longer
   * available [to new users]. Please update your code…", google/adk-docs#1840; "models/… is not found for API version
   * v1…", an unknown name). A configuration fault: nothing was done or billed, and no document is to blame.
   */
  public static boolean modelUnavailable(Throwable error) {
    ApiException api = api(error);
    return api != null && api.code() == 404 && "NOT_FOUND".equals(api.status());
  }

  /** The most of a message a record or a log line keeps (Google's words, or whatever answered in its place). */
  static final int MAX_DESCRIPTION_CHARS = 1000;

  public static String describe(Throwable error) {
    ApiException api = api(error);
    String description = error instanceof ModelUnavailable ? error.getMessage() : api != null
        ? "Gemini answered " + api.code() + " " + api.status() + ": " + api.message()
        : error.getClass().getSimpleName() + ": " + error.getMessage();
    return ForeignText.cut(description, MAX_DESCRIPTION_CHARS);
  }

  private static ApiException api(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof ApiException api) {
        return api;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return null;
  }
}
