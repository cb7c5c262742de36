package dev.once.gemini;

import dev.once.key.IdempotencyKey;
import dev.once.key.InvalidKey;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Key of a Gemini batch job's completion: {@code gemini:batches/{id}}. The webhook and the reconciler name the
 * same job in different fields and spellings; every spelling folds to one key here, and nowhere else.
 *
 * <p>Folded: the fields {@code name}, {@code operation}, {@code operationName}, {@code resourceName} and the
 * webhook's {@code data.id}; surrounding blanks; trailing slashes; an API root or version prefix ({@code
 * https://host/v1beta/}, {@code /v1/}); a {@code projects/…/locations/…/} prefix; the collection words {@code
 * batches}, {@code batchJobs}, {@code batchPredictionJobs}, {@code operations} and {@code models/M/operations};
 * a bare id. The collection words match in any case, the id itself stays case-sensitive: ids are opaque, and
 * folding their case could merge two jobs.
 */
public final class GeminiCompletionKeys {
  public static final String PREFIX = "gemini:batches/";

  /** In the order they are tried. */
  public static final List<String> NAME_FIELDS =
      List.of("name", "operation", "operationName", "resourceName", "data.id");

  private static final String ID = "[A-Za-z0-9][A-Za-z0-9_-]*";
  private static final Pattern API_ROOT =
      Pattern.compile("^(?:[a-z][a-z0-9+.-]*://[^/]+)?/*(?:v1(?:alpha|beta)?\\d*/)?");
  private static final Pattern LOCATION = Pattern.compile("^projects/[^/]+/locations/[^/]+/");
  private static final Pattern QUALIFIED = Pattern.compile(
      "^(?:(?i:models)/[^/]+/)?(?i:batches|batchJobs|batchPredictionJobs|operations)/(" + ID + ")$");
  private static final Pattern BARE = Pattern.compile("^(" + ID + ")$");
  /** A collection word alone ("batches/") names no job. */
  private static final Pattern RESERVED =
      Pattern.compile(
          "(?i)batches|batchJobs|batchPredictionJobs|operations|models|projects|locations|v1(alpha|beta)?\\d*");

  private GeminiCompletionKeys() {}

  /** The key of one completion event (webhook body, or a listed/fetched batch job as a JSON map). */
  public static IdempotencyKey of(Map<String, ?> event) {
    if (event == null) {
      throw new InvalidKey("Gemini completion is empty");
    }
    Set<String> ids = new LinkedHashSet<>();
    for (String field : NAME_FIELDS) {
      String candidate = text(field.equals("data.id") ? nested(event.get("data"), "id") : event.get(field));
      if (candidate != null) {
        String id = jobId(candidate);
        if (id != null) {
          ids.add(id);
        }
      }
    }
    if (ids.isEmpty()) {
      throw new InvalidKey("Gemini completion names no batch job; fields seen: " + fieldsSeen(event)
          + " (a usable name is in one of " + NAME_FIELDS + ")");
    }
    if (ids.size() > 1) {
      throw new InvalidKey("Gemini completion names several batch jobs " + ids + "; fields seen: " + fieldsSeen(event));
    }
    return IdempotencyKey.of(PREFIX + ids.iterator().next());
  }

  /** The key of a job known by one name, in any of the spellings above. */
  public static IdempotencyKey ofName(String name) {
    String id = name == null ? null : jobId(name);
    if (id == null) {
      throw new InvalidKey("not a Gemini batch job name: " + IdempotencyKey.preview(String.valueOf(name)));
    }
    return IdempotencyKey.of(PREFIX + id);
  }

  /** The job's resource name as the Gemini API spells it ({@code batches/ID}), from its key. */
  public static String jobName(IdempotencyKey key) {
    if (!key.value().startsWith(PREFIX)) {
      throw new InvalidKey("not a Gemini completion key: " + key);
    }
    return key.value().substring("gemini:".length());
  }

  private static String jobId(String raw) {
    String name = raw.strip();
    while (name.endsWith("/")) {
      name = name.substring(0, name.length() - 1).stripTrailing();
    }
    name = API_ROOT.matcher(name).replaceFirst("");
    name = LOCATION.matcher(name).replaceFirst("");
    Matcher qualified = QUALIFIED.matcher(name);
    if (qualified.matches()) {
      return qualified.group(1);
    }
    Matcher bare = BARE.matcher(name);
    return bare.matches() && !RESERVED.matcher(name).matches() ? bare.group(1) : null;
  }

  private static Object nested(Object parent, String field) {
    return parent instanceof Map<?, ?> map ? map.get(field) : null;
  }

  /** A name field holds a string, or an object with a name (a listed operation). */
  private static String text(Object value) {
    if (value instanceof String s) {
      return s.isBlank() ? null : s;
    }
    if (value instanceof Map<?, ?> map && map.get("name") instanceof String s && !s.isBlank()) {
      return s;
    }
    return null;
  }

  private static List<String> fieldsSeen(Map<String, ?> event) {
    List<String> seen = new ArrayList<>();
    for (Map.Entry<String, ?> entry : event.entrySet()) {
      seen.add(entry.getKey());
      if (entry.getValue() instanceof Map<?, ?> inner) {
        inner.keySet().forEach(k -> seen.add(entry.getKey() + "." + k));
      }
    }
    return seen;
  }
}
