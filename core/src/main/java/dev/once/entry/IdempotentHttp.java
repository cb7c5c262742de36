package dev.once.entry;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.functions.HttpRequest;
import com.google.cloud.functions.HttpResponse;
import dev.once.guard.Attempt;
import dev.once.guard.Completion;
import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.guard.Policy;
import dev.once.key.IdempotencyKey;
import dev.once.key.Sha256;
import dev.once.ledger.SideWrites;
import dev.once.observe.EventLog;
import dev.once.observe.OutcomeLabel;
import dev.once.observe.Trace;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * An HTTP function guarded by the {@code Idempotency-Key} request header, as Stripe's API behaves and the IETF draft
 * (draft-ietf-httpapi-idempotency-key-header-07) describes it. The first request with a key runs the handler, and
 * its answer (status, content type, body) is stored in the ledger in the commit that completes the claim, with the
 * handler's own Firestore writes; a retry with the same key and the same request gets that answer again, marked
 * {@code Idempotent-Replayed: true}. Also: 409 while the first is in flight, 422 when the key comes with another
 * request (method, path, query or body), 400 without a well-formed key, 405 for methods other than POST and
 * PATCH, 413 above {@value #MAX_REQUEST_BYTES} bytes. A malformed request ({@link BadRequest} from the parser) is
 * answered 400 before anything is claimed, so the key stays free for the corrected request. What the handler does to
 * the key: an answer below 500 is stored and replayed; a 5xx answer, or an exception, releases it (the retry runs the
 * handler again, so a handler passes its key on to whatever it calls, {@code attempt.key()}), as does a {@link
 * dev.once.guard.Refusal#notPerformed} (without counting the try); a {@link dev.once.guard.Refusal#permanent} burns it
 * (500 {@code rejected}, to this and every later request with it: answer a 4xx instead when the client should know
 * why); a {@link dev.once.guard.Refusal#deferred} answers 503 with {@code Retry-After} and keeps it free. Keys belong
 * to one function (and one caller, {@link #scopedBy}); function names follow Cloud Functions' rule,
 * {@code [A-Za-z][A-Za-z0-9_-]{0,62}}.
 *
 * <pre>{@code
 * private final IdempotentHttp<Charge> http = IdempotentHttp.of("CreateCharge", once, Charge::parse, this::charge);
 * public void service(HttpRequest request, HttpResponse response) throws IOException {
 *   http.service(request, response);
 * }
 * }</pre>
 */
public final class IdempotentHttp<T> {
  public static final String KEY_HEADER = "Idempotency-Key";
  public static final String REPLAYED_HEADER = "Idempotent-Replayed";
  /** The ledger effect of every guarded request, and its log label. */
  public static final String EFFECT = "request";
  /** Stripe's bound on a key. */
  public static final int MAX_KEY_CHARS = 255;
  public static final int MAX_REQUEST_BYTES = 1024 * 1024;
  /**
   * Answers up to this size are stored whole. A Firestore document holds at most 1 MiB, and a body that is not
   * UTF-8 is stored in base64 (4/3 larger): 512 KiB leaves room for the rest of the record.
   */
  public static final int MAX_STORED_BODY_BYTES = 512 * 1024;

  private static final Set<String> METHODS = Set.of("POST", "PATCH");
  /** Visible ASCII: what a header carries unchanged, and what Stripe's and the draft's examples use. */
  private static final Pattern KEY = Pattern.compile("[!-~]{1," + MAX_KEY_CHARS + "}");
  /** Cloud Functions' rule for function names; no ':' so a scoped key cannot be confused with another. */
  private static final Pattern FUNCTION = Pattern.compile("[A-Za-z][A-Za-z0-9_-]{0,62}");
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Reads the request before anything is claimed; {@link BadRequest} answers 400 and keeps the key free. */
  @FunctionalInterface
  public interface Parser<T> {
    T parse(HttpRequest request, byte[] body) throws BadRequest;
  }

  /**
   * A parser of a JSON body into {@code type} (Jackson: a record's components by name, an unknown field refused) that
   * {@code valid} accepts; anything else is a {@link BadRequest} that tells the client {@code expected}.
   */
  public static <T> Parser<T> json(Class<T> type, Predicate<? super T> valid, String expected) {
    return (request, body) -> {
      T value;
      try {
        value = JSON.readValue(body, type);
      } catch (IOException e) {
        throw new BadRequest(expected);
      }
      if (value == null || !valid.test(value)) {
        throw new BadRequest(expected);
      }
      return value;
    };
  }

  /** Runs the request once per key; {@code attempt.key()} is this function's key for it, to pass on. */
  @FunctionalInterface
  public interface Handler<T> {
    Answer handle(T input, Attempt attempt) throws Exception;
  }

  /** The request can never be served as it is: answered 400, nothing stored. */
  public static final class BadRequest extends Exception {
    private static final long serialVersionUID = 1L;

    public BadRequest(String reason) {
      super(reason);
    }
  }

  /** What the handler answers, and the Firestore writes that commit with it (only when it is stored: below 500). */
  public record Answer(int status, String contentType, byte[] body, SideWrites writes) {
    public Answer {
      if (status < 200 || status > 599) {
        throw new IllegalArgumentException("an answer's status is 200 to 599, got " + status);
      }
      if (contentType == null || body == null || writes == null) {
        throw new IllegalArgumentException("an answer has a content type, a body and writes (SideWrites.NONE)");
      }
    }

    public static Answer of(int status, String contentType, byte[] body) {
      return new Answer(status, contentType, body, SideWrites.NONE);
    }

    /** {@code value} as JSON (Jackson). */
    public static Answer json(int status, Object value) {
      try {
        return of(status, "application/json", JSON.writeValueAsBytes(value));
      } catch (JsonProcessingException e) {
        throw new IllegalArgumentException("not serialisable as JSON: " + e.getOriginalMessage(), e);
      }
    }

    /** The same answer, with {@code more} writes in the commit that stores it. */
    public Answer committing(SideWrites more) {
      return new Answer(status, contentType, body, writes.and(more));
    }
  }

  /** A 5xx answer: thrown through {@link Once} so the claim is released, then sent as it is. */
  private static final class ServerError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient Answer answer;

    ServerError(Answer answer) {
      super("the handler answered " + answer.status(), null, false, false);
      this.answer = answer;
    }
  }

  private final String function;
  private final Once once;
  private final Parser<T> parser;
  private final Handler<T> handler;
  private final Function<HttpRequest, String> caller;
  private final Policy policy;

  private IdempotentHttp(String function, Once once, Parser<T> parser, Handler<T> handler,
      Function<HttpRequest, String> caller, Policy policy) {
    this.function = functionName(function);
    this.once = once;
    this.parser = parser;
    this.handler = handler;
    this.caller = caller;
    this.policy = policy;
  }

  /** {@code function}, when it follows Cloud Functions' rule for names; else an {@link IllegalArgumentException}. */
  static String functionName(String function) {
    if (function == null || !FUNCTION.matcher(function).matches()) {
      throw new IllegalArgumentException("a function name matches " + FUNCTION + ", got " + function);
    }
    return function;
  }

  /** @param function the function's name: its log lines, and the scope of its keys */
  public static <T> IdempotentHttp<T> of(String function, Once once, Parser<T> parser, Handler<T> handler) {
    return new IdempotentHttp<>(function, once, parser, handler, null, Policy.DEFAULT);
  }

  /**
   * The same guard, with keys per caller as well (Stripe scopes keys by account): {@code caller} names who sent the
   * request, as the function authenticated it. A request it names no one for (null or blank) is answered 401.
   */
  public IdempotentHttp<T> scopedBy(Function<HttpRequest, String> caller) {
    return new IdempotentHttp<>(function, once, parser, handler, caller, policy);
  }

  /**
   * The same guard, running the handler under {@code policy} (its fingerprint is the request's): with
   * {@link Policy#atMostOnce()}, a retry after a try that failed after it may have acted (an exception, a 5xx) is
   * not run again but answered 500 {@code rejected}, and so is every later one with that key.
   */
  public IdempotentHttp<T> withPolicy(Policy policy) {
    return new IdempotentHttp<>(function, once, parser, handler, caller, policy);
  }

  public void service(HttpRequest request, HttpResponse response) throws IOException {
    long started = System.nanoTime();
    Trace.within(HttpAnswer.traceOf(request), () -> {
      serve(request, response, started);
      return null;
    });
  }

  private void serve(HttpRequest request, HttpResponse response, long started) throws IOException {
    if (!METHODS.contains(request.getMethod())) {
      response.appendHeader("Allow", "POST, PATCH");
      refuseUnread(request, response, started, 405, "method_not_allowed",
          "only POST and PATCH take an Idempotency-Key");
      return;
    }
    // The invoker's header map is case-insensitive, with one value per header line (commas are not split).
    List<String> sent = request.getHeaders().getOrDefault(KEY_HEADER, List.of());
    if (sent.isEmpty()) {
      refuseUnread(request, response, started, 400, "idempotency_key_missing",
          "this operation needs an Idempotency-Key");
      return;
    }
    Optional<String> clientKey = sent.size() == 1 ? clientKey(sent.get(0)) : Optional.empty();
    if (clientKey.isEmpty()) {
      refuseUnread(request, response, started, 400, "idempotency_key_malformed", "send one Idempotency-Key of 1 to "
          + MAX_KEY_CHARS + " visible ASCII characters, bare or as a quoted string");
      return;
    }
    String scope = "";
    if (caller != null) {
      String who = caller.apply(request);
      if (who == null || who.isBlank()) {
        EventLog.record(once.log(), function, null, EFFECT, OutcomeLabel.UNAUTHENTICATED, 0,
            EventLog.elapsedMs(started),
            Map.of("path", request.getPath()));
        response.appendHeader("Connection", "close"); // see refuseUnread
        HttpAnswer.send(response, 401, "unauthenticated");
        return;
      }
      scope = Sha256.hex(who);
    }
    byte[] body = HttpAnswer.readAtMost(request, MAX_REQUEST_BYTES);
    if (body == null) {
      refuseUnread(request, response, started, 413, "too_large", "the body is over " + MAX_REQUEST_BYTES + " bytes");
      return;
    }
    T input;
    try {
      input = parser.parse(request, body);
    } catch (BadRequest e) {
      refuse(request, response, started, 400, "malformed", String.valueOf(e.getMessage()));
      return;
    }
    // An empty scope or 64 hex digits, between two ':': no client key can make one key look like another's.
    IdempotencyKey key = IdempotencyKey.of("http:" + function + ":" + scope + ":" + clientKey.get());
    run(key, fingerprint(request, body), input, request, response, started);
  }

  private void run(IdempotencyKey key, String fingerprint, T input, HttpRequest request, HttpResponse response,
      long started) throws IOException {
    Ran ran = new Ran();
    Outcome outcome;
    try {
      outcome = once.run(key, EFFECT, policy.withFingerprint(fingerprint), attempt -> {
        ran.attempt = attempt.number();
        Answer answer = handler.handle(input, attempt);
        if (answer.status() >= 500) {
          throw new ServerError(answer);
        }
        ran.answer = answer;
        return Completion.of(stored(answer), answer.writes());
      });
    } catch (ServerError e) {
      log(key, OutcomeLabel.FAILED, ran.attempt, request, e.answer.status(), started, Map.of());
      send(response, e.answer);
      return;
    } catch (RuntimeException e) {
      log(key, OutcomeLabel.FAILED, ran.attempt, request, 500, started, Map.of("error", String.valueOf(e)));
      HttpAnswer.send(response, 500, "failed", Map.of("detail", "the request failed; retry it with the same key"));
      return;
    }
    switch (outcome) {
      case Outcome.Processed processed -> {
        int bytes = ran.answer.body().length;
        log(key, outcome.label(), processed.attempts(), request, ran.answer.status(), started,
            bytes > MAX_STORED_BODY_BYTES ? Map.of("bodyNotStored", bytes) : Map.of());
        send(response, ran.answer);
      }
      case Outcome.Duplicate duplicate -> {
        Answer replay = replayed(duplicate.result());
        log(key, outcome.label(), duplicate.attempts(), request, replay.status(), started, Map.of());
        response.appendHeader(REPLAYED_HEADER, "true");
        send(response, replay);
      }
      case Outcome.InFlight inFlight -> {
        log(key, outcome.label(), inFlight.attempts(), request, 409, started, Map.of());
        response.appendHeader("Retry-After", "1");
        HttpAnswer.send(response, 409, "in_flight",
            Map.of("detail", "a request with this Idempotency-Key is being processed; retry it later"));
      }
      case Outcome.Conflict conflict -> {
        log(key, outcome.label(), 0, request, 422, started, Map.of());
        HttpAnswer.send(response, 422, "idempotency_key_reused", Map.of("detail",
            "this Idempotency-Key was used with another request (method, path, query or body); send a new key"));
      }
      case Outcome.Deferred deferred -> {
        // Nothing resumes an HTTP request on its own: the client retries with the same key once the wait is over.
        log(key, outcome.label(), deferred.attempts(), request, 503, started,
            Map.of("reason", String.valueOf(deferred.reason())));
        response.appendHeader("Retry-After", "60");
        HttpAnswer.send(response, 503, "deferred", Map.of("detail",
            "the request must wait (" + deferred.reason() + "); retry it later with the same key"));
      }
      case Outcome.Rejected rejected -> {
        // A permanent Refusal from the handler, or an answer the ledger cannot store: the reason is for the log only.
        log(key, outcome.label(), ran.attempt, request, 500, started,
            Map.of("reason", String.valueOf(rejected.reason())));
        HttpAnswer.send(response, 500, "rejected",
            Map.of("detail", "the request was refused for good and will not run again with this key"));
      }
    }
  }

  /** What the handler did in this request, if it ran. */
  private static final class Ran {
    int attempt;
    Answer answer;
  }

  /**
   * The key as sent: a bare token (Stripe) or the draft's Structured Field string, whose quotes are not part of it.
   * Escapes are not taken: a key holding '"' or '\' is refused rather than read two ways.
   */
  static Optional<String> clientKey(String header) {
    String value = header.strip();
    if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
      value = value.substring(1, value.length() - 1);
    }
    boolean plain = KEY.matcher(value).matches() && value.indexOf('"') < 0 && value.indexOf('\\') < 0;
    return plain ? Optional.of(value) : Optional.empty();
  }

  /** What makes two requests the same: method, path, query and body bytes (the method and path hold no newline). */
  static String fingerprint(HttpRequest request, byte[] body) {
    ByteArrayOutputStream all = new ByteArrayOutputStream(body.length + 256);
    String head = request.getMethod() + "\n" + request.getPath() + "\n" + request.getQuery().orElse("") + "\n";
    all.writeBytes(head.getBytes(StandardCharsets.UTF_8));
    all.writeBytes(body);
    return "sha256:" + Sha256.hex(all.toByteArray());
  }

  /** The answer as the ledger keeps it: UTF-8 bodies as text (readable in dev/inspect), others in base64. */
  static Map<String, Object> stored(Answer answer) {
    Map<String, Object> stored = new LinkedHashMap<>();
    stored.put("status", (long) answer.status());
    stored.put("contentType", answer.contentType());
    stored.put("bodyBytes", (long) answer.body().length);
    if (answer.body().length <= MAX_STORED_BODY_BYTES) {
      Optional<String> text = utf8(answer.body());
      if (text.isPresent()) {
        stored.put("body", text.get());
      } else {
        stored.put("bodyBase64", Base64.getEncoder().encodeToString(answer.body()));
      }
    }
    return stored;
  }

  /** The stored answer; one whose body was over the bound keeps its status, with a note instead of the body. */
  static Answer replayed(Map<String, Object> stored) {
    int status = ((Number) stored.get("status")).intValue();
    if (stored.get("body") instanceof String text) {
      return Answer.of(status, (String) stored.get("contentType"), text.getBytes(StandardCharsets.UTF_8));
    }
    if (stored.get("bodyBase64") instanceof String base64) {
      return Answer.of(status, (String) stored.get("contentType"), Base64.getDecoder().decode(base64));
    }
    Map<String, Object> note = new LinkedHashMap<>();
    note.put("status", "body_not_stored");
    note.put("bodyBytes", stored.get("bodyBytes"));
    note.put("detail", "the first answer's body was over the " + MAX_STORED_BODY_BYTES
        + " bytes kept for replays; read the resource instead");
    return Answer.json(status, note);
  }

  private static Optional<String> utf8(byte[] body) {
    try {
      return Optional.of(StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(body)).toString());
    } catch (CharacterCodingException e) {
      return Optional.empty();
    }
  }

  private static void send(HttpResponse response, Answer answer) throws IOException {
    HttpAnswer.send(response, answer.status(), answer.contentType(), answer.body());
  }

  /**
   * A refusal sent before the body is read (or whole): the body is left on the connection, which the server then
   * closes, so a client that reuses it meets a closed connection (the Java client: "header parser received no
   * bytes", seen in CreateChargeIT). {@code Connection: close} tells the client to open a new one.
   */
  private void refuseUnread(HttpRequest request, HttpResponse response, long started, int status, String code,
      String detail) throws IOException {
    response.appendHeader("Connection", "close");
    refuse(request, response, started, status, code, detail);
  }

  private void refuse(HttpRequest request, HttpResponse response, long started, int status, String code,
      String detail) throws IOException {
    EventLog.refused(once.log(), function, code + ": " + detail, started, "path", request.getPath());
    HttpAnswer.send(response, status, code, Map.of("detail", detail));
  }

  private void log(IdempotencyKey key, OutcomeLabel label, int attempts, HttpRequest request, int status,
      long started, Map<String, ?> more) {
    Map<String, Object> details = new LinkedHashMap<>();
    details.put("method", request.getMethod());
    details.put("path", request.getPath());
    details.put("status", status);
    details.putAll(more);
    EventLog.record(once.log(), function, key.value(), EFFECT, label, attempts, EventLog.elapsedMs(started), details);
  }
}
