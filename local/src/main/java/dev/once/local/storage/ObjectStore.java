package dev.once.local.storage;

import dev.once.wire.http.HttpError;
import dev.once.wire.storage.Hashes;
import dev.once.wire.storage.StoredObject;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Buckets of objects kept in memory, every generation of every object kept (as in a bucket with Object
 * Versioning on), so a test can read the generation an event named after the object was overwritten.
 */
final class ObjectStore {
  private static final Pattern BUCKET_NAME = Pattern.compile("[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]");

  private final Map<String, Bucket> buckets = new HashMap<>();
  private final boolean autoCreateBuckets;
  private long lastGeneration;

  ObjectStore(boolean autoCreateBuckets) {
    this.autoCreateBuckets = autoCreateBuckets;
  }

  record Bucket(String name, Instant created, NavigableMap<String, History> objects) {}

  /** All generations of one name; {@code live} is null once the live version was deleted. */
  static final class History {
    final NavigableMap<Long, StoredObject> generations = new TreeMap<>();
    Long live;
  }

  record ListQuery(String prefix, String delimiter, boolean versions, String startOffset, String endOffset,
      int maxResults, String pageToken) {}

  record ListPage(List<StoredObject> items, List<String> prefixes, String nextPageToken) {}

  static void checkBucketName(String name) {
    if (name == null || !BUCKET_NAME.matcher(name).matches() || name.contains("..")) {
      throw HttpError.badRequest("invalid", "Invalid bucket name: '" + name + "'");
    }
  }

  static void checkObjectName(String name) {
    if (name == null || name.isEmpty()) {
      throw new HttpError(400, "INVALID_ARGUMENT", "required", "Required");
    }
    if (name.getBytes(StandardCharsets.UTF_8).length > 1024 || name.indexOf('\r') >= 0 || name.indexOf('\n') >= 0
        || name.equals(".") || name.equals("..") || name.startsWith(".well-known/acme-challenge/")) {
      throw HttpError.badRequest("invalid", "The specified object name is not valid.");
    }
  }

  synchronized Instant createBucket(String name) {
    checkBucketName(name);
    if (buckets.containsKey(name)) {
      throw new HttpError(409, "ALREADY_EXISTS", "conflict",
          "Your previous request to create the named bucket succeeded and you already own it.");
    }
    Bucket bucket = new Bucket(name, now(), new TreeMap<>());
    buckets.put(name, bucket);
    return bucket.created();
  }

  /** Every bucket's creation time, by name. */
  synchronized NavigableMap<String, Instant> bucketsCreated() {
    NavigableMap<String, Instant> all = new TreeMap<>();
    buckets.forEach((name, bucket) -> all.put(name, bucket.created()));
    return all;
  }

  synchronized Optional<Instant> bucketCreated(String name) {
    return Optional.ofNullable(buckets.get(name)).map(Bucket::created);
  }

  synchronized StoredObject write(String bucketName, NewObject object, Preconditions preconditions) {
    checkObjectName(object.name());
    Bucket bucket = bucketForWrite(bucketName);
    History history = bucket.objects().get(object.name());
    preconditions.check(history == null || history.live == null ? null : history.generations.get(history.live), false);
    String md5 = Hashes.md5(object.data());
    String crc32c = Hashes.crc32c(object.data());
    if (object.expectedMd5() != null && !object.expectedMd5().equals(md5)) {
      throw HttpError.badRequest("invalid", "Provided MD5 hash \"" + object.expectedMd5()
          + "\" doesn't match calculated MD5 hash \"" + md5 + "\".");
    }
    if (object.expectedCrc32c() != null && !object.expectedCrc32c().equals(crc32c)) {
      throw HttpError.badRequest("invalid", "Provided CRC32C \"" + object.expectedCrc32c()
          + "\" doesn't match calculated CRC32C \"" + crc32c + "\".");
    }
    Instant now = now();
    // GCS generations are microsecond timestamps; keeping that shape keeps them monotonic and realistic.
    long generation = Math.max(lastGeneration + 1, ChronoUnit.MICROS.between(Instant.EPOCH, now));
    lastGeneration = generation;
    String contentType = object.contentType() == null || object.contentType().isBlank()
        ? "application/octet-stream" : object.contentType();
    StoredObject stored = new StoredObject(bucketName, object.name(), generation, 1, contentType,
        object.metadata(), object.contentEncoding(), object.cacheControl(), object.contentDisposition(),
        object.data(), md5, crc32c, now, now);
    History target = bucket.objects().computeIfAbsent(object.name(), n -> new History());
    target.generations.put(generation, stored);
    target.live = generation;
    return stored;
  }

  /** The live version, or the given generation even if it is no longer live; 404 otherwise. */
  synchronized StoredObject read(String bucketName, String name, Long generation, Preconditions preconditions) {
    StoredObject found = find(bucketName, name, generation);
    preconditions.check(found, true);
    return found;
  }

  /** Deletes the live version (older generations stay readable), or exactly the generation named. */
  synchronized StoredObject delete(String bucketName, String name, Long generation, Preconditions preconditions) {
    StoredObject found = find(bucketName, name, generation);
    preconditions.check(found, false);
    History history = existingBucket(bucketName).objects().get(name);
    if (generation == null) {
      history.live = null;
    } else {
      history.generations.remove(generation);
      if (generation.equals(history.live)) {
        history.live = null;
      }
      if (history.generations.isEmpty()) {
        existingBucket(bucketName).objects().remove(name);
      }
    }
    return found;
  }

  synchronized ListPage list(String bucketName, ListQuery query) {
    Bucket bucket = existingBucket(bucketName);
    String prefix = query.prefix() == null ? "" : query.prefix();
    String after = query.pageToken() == null ? null : decodeToken(query.pageToken());
    List<StoredObject> items = new ArrayList<>();
    List<String> prefixes = new ArrayList<>();
    String lastKey = null;
    boolean more = false;
    for (Map.Entry<String, History> entry : bucket.objects().tailMap(prefix, true).entrySet()) {
      String name = entry.getKey();
      if (!name.startsWith(prefix)) {
        break;
      }
      if ((query.startOffset() != null && name.compareTo(query.startOffset()) < 0)
          || (query.endOffset() != null && name.compareTo(query.endOffset()) >= 0)) {
        continue;
      }
      String key;
      String collapsed = null;
      if (query.delimiter() != null && !query.delimiter().isEmpty()) {
        int at = name.indexOf(query.delimiter(), prefix.length());
        if (at >= 0) {
          collapsed = name.substring(0, at + query.delimiter().length());
        }
      }
      List<StoredObject> versions = new ArrayList<>();
      if (collapsed == null) {
        History history = entry.getValue();
        if (query.versions()) {
          versions.addAll(history.generations.values());
        } else if (history.live != null) {
          versions.add(history.generations.get(history.live));
        }
      }
      if (collapsed != null) {
        key = collapsed;
        if (prefixes.contains(collapsed) || (after != null && key.compareTo(after) <= 0)) {
          continue;
        }
        if (items.size() + prefixes.size() >= query.maxResults()) {
          more = true;
          break;
        }
        prefixes.add(collapsed);
        lastKey = key;
        continue;
      }
      for (StoredObject version : versions) {
        key = name + "\u0000" + String.format("%020d", version.generation());
        if (after != null && key.compareTo(after) <= 0) {
          continue;
        }
        if (items.size() + prefixes.size() >= query.maxResults()) {
          more = true;
          break;
        }
        items.add(version);
        lastKey = key;
      }
      if (more) {
        break;
      }
    }
    return new ListPage(items, prefixes, more ? encodeToken(lastKey) : null);
  }

  private StoredObject find(String bucketName, String name, Long generation) {
    Bucket bucket = existingBucket(bucketName);
    History history = bucket.objects().get(name);
    Long wanted = generation != null ? generation : history == null ? null : history.live;
    StoredObject found = history == null || wanted == null ? null : history.generations.get(wanted);
    if (found == null) {
      throw HttpError.notFound("No such object: " + bucketName + "/" + name);
    }
    return found;
  }

  private Bucket bucketForWrite(String name) {
    checkBucketName(name);
    Bucket bucket = buckets.get(name);
    if (bucket == null && autoCreateBuckets) {
      bucket = new Bucket(name, now(), new TreeMap<>());
      buckets.put(name, bucket);
    }
    if (bucket == null) {
      throw HttpError.notFound("The specified bucket does not exist.");
    }
    return bucket;
  }

  private Bucket existingBucket(String name) {
    Bucket bucket = buckets.get(name);
    if (bucket == null) {
      throw HttpError.notFound("The specified bucket does not exist.");
    }
    return bucket;
  }

  private static String encodeToken(String key) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(key.getBytes(StandardCharsets.UTF_8));
  }

  private static String decodeToken(String token) {
    try {
      return new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw HttpError.badRequest("invalid", "Invalid page token: " + token);
    }
  }

  private static Instant now() {
    return Instant.now().truncatedTo(ChronoUnit.MILLIS);
  }
}
