package dev.once.key;

/**
 * Key of a Cloud Storage object generation: {@code gcs:{bucket}/{name}#{generation}}. The generation is what
 * absorbs a doubled bucket notification while keeping deliberate re-uploads (a new generation is a new
 * document), so it is required.
 */
public final class StorageObjectKeys {
  private StorageObjectKeys() {}

  public static IdempotencyKey of(String bucket, String name, long generation) {
    if (bucket == null || bucket.isBlank()) {
      throw new InvalidKey("storage object has no bucket");
    }
    if (name == null || name.isEmpty()) {
      throw new InvalidKey("storage object in bucket " + bucket + " has no name");
    }
    if (generation <= 0) {
      throw new InvalidKey("storage object " + bucket + "/" + IdempotencyKey.preview(name)
          + " has no generation (got " + generation + ")");
    }
    return IdempotencyKey.of("gcs:" + bucket + "/" + name + "#" + generation);
  }

  /** The generation as GCS sends it in event data: a decimal string. */
  public static IdempotencyKey of(String bucket, String name, String generation) {
    if (generation == null || generation.isBlank()) {
      throw new InvalidKey("storage object " + bucket + "/" + IdempotencyKey.preview(String.valueOf(name))
          + " has no generation");
    }
    try {
      return of(bucket, name, Long.parseLong(generation.strip()));
    } catch (NumberFormatException e) {
      throw new InvalidKey("storage object generation is not a number: " + IdempotencyKey.preview(generation));
    }
  }
}
