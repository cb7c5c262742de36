package dev.once.local.storage;

import dev.once.local.http.Faults;
import dev.once.local.http.StandIn;
import dev.once.wire.http.Counters;
import dev.once.wire.http.Json;
import dev.once.wire.http.LocalServer;
import dev.once.wire.storage.ObjectFinalized;
import dev.once.wire.storage.ObjectResource;
import dev.once.wire.storage.StoredObject;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A Cloud Storage stand-in spoken to by the real {@code google-cloud-storage} client over HTTP (point it here
 * with {@code StorageOptions.http().setHost(baseUrl())} or {@code STORAGE_EMULATOR_HOST}). Every write is a new
 * generation, older generations stay readable, and each write fires an {@code object.finalize} notification.
 */
public final class StorageStandIn implements StandIn {
  /** Startup settings. Port 0 picks a free port; notification URLs receive {@link ObjectFinalized#toJson()}. */
  public record Options(int port, long maxObjectBytes, boolean autoCreateBuckets, boolean notifyTwice,
      List<URI> notifyUrls) {
    public static final long DEFAULT_MAX_OBJECT_BYTES = 64L * 1024 * 1024;

    public Options {
      notifyUrls = List.copyOf(notifyUrls);
      if (maxObjectBytes <= 0 || maxObjectBytes > Integer.MAX_VALUE - 8) {
        throw new IllegalArgumentException("maxObjectBytes must be between 1 and 2 GiB");
      }
    }

    public static Options defaults() {
      return new Options(0, DEFAULT_MAX_OBJECT_BYTES, true, false, List.of());
    }

    public Options withPort(int port) {
      return new Options(port, maxObjectBytes, autoCreateBuckets, notifyTwice, notifyUrls);
    }

    public Options withMaxObjectBytes(long max) {
      return new Options(port, max, autoCreateBuckets, notifyTwice, notifyUrls);
    }

    public Options withNotifyUrl(URI url) {
      List<URI> urls = new ArrayList<>(notifyUrls);
      urls.add(url);
      return new Options(port, maxObjectBytes, autoCreateBuckets, notifyTwice, urls);
    }
  }

  private final Counters counters = new Counters();
  private final Faults faults = new Faults();
  private final ObjectStore store;
  private final Notifier notifier = new Notifier(counters);
  private final LocalServer server;

  private StorageStandIn(Options options) {
    this.store = new ObjectStore(options.autoCreateBuckets());
    notifier.notifyTwice(options.notifyTwice());
    options.notifyUrls().forEach(url -> notifier.addListener(new HttpNotificationForwarder(url)));
    StorageApi api = new StorageApi(store, notifier, counters, faults, new StorageAdmin(this), this::baseUrl,
        options.maxObjectBytes());
    this.server = LocalServer.start(options.port(), api);
  }

  public static StorageStandIn start() {
    return start(Options.defaults());
  }

  public static StorageStandIn start(Options options) {
    return new StorageStandIn(options);
  }

  @Override
  public String baseUrl() {
    return server.baseUrl();
  }

  /** The value for {@code STORAGE_EMULATOR_HOST} / {@code StorageOptions.setHost}: same as {@link #baseUrl()}. */
  public String endpoint() {
    return baseUrl();
  }

  public int port() {
    return server.port();
  }

  public void addListener(ObjectFinalizeListener listener) {
    notifier.addListener(listener);
  }

  public void removeListener(ObjectFinalizeListener listener) {
    notifier.removeListener(listener);
  }

  /** Sends each finalize notification twice, with different event ids: the doubled bucket notification. */
  public void notifyTwice(boolean enabled) {
    notifier.notifyTwice(enabled);
  }

  /**
   * While enabled, a new generation's notification is made and recorded ({@link #notifications}) but sent to no
   * listener: a test delivers it itself, to the one instance it wants to see it (decided as the generation is
   * written, not when the notification is dispatched).
   */
  public void withholdNotifications(boolean enabled) {
    notifier.withhold(enabled);
  }

  /** Every notification sent so far, in order. */
  public List<ObjectFinalized> notifications() {
    return notifier.sent();
  }

  /** One more finalize notification for an existing generation, with a new event id. */
  public ObjectFinalized renotify(String bucket, String name, long generation) {
    StoredObject object = store.read(bucket, name, generation, Preconditions.NONE);
    return notifier.again(object, Json.text(ObjectResource.toJson(object, baseUrl())));
  }

  /** The next {@code count} API requests answer 503 (the client's retry policy decides what happens next). */
  public void failNext(int count) {
    failNext(count, 503);
  }

  public void failNext(int count, int status) {
    faults.failNext(count, status);
  }

  public void latency(Duration latency) {
    faults.latency(latency);
  }

  public void createBucket(String name) {
    store.createBucket(name);
  }

  /** Removes exactly one generation, as {@code DELETE ...?generation=G} does. */
  public void deleteGeneration(String bucket, String name, long generation) {
    store.delete(bucket, name, generation, Preconditions.NONE);
  }

  /** Calls per JSON API method ({@code objects.insert}, {@code objects.get}, ...), notifications, injected failures. */
  public Counters counters() {
    return counters;
  }

  @Override
  public void close() {
    server.close();
    notifier.close();
  }
}
