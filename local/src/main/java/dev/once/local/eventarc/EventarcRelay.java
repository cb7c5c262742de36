package dev.once.local.eventarc;

import dev.once.local.http.RetryPolicy;
import dev.once.local.http.StandIn;
import dev.once.local.storage.ObjectFinalizeListener;
import dev.once.local.storage.StorageStandIn;
import dev.once.wire.eventarc.CloudEvent;
import dev.once.wire.eventarc.StorageEvents;
import dev.once.wire.http.Counters;
import dev.once.wire.http.LocalServer;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Logger;

/**
 * Delivers events to function URLs the way Eventarc does: binary-mode CloudEvents, routed by event type, retried
 * with backoff while the function answers non-2xx, at least once; what it gives up on is logged and counted.
 * Sources: the storage stand-in (an in-process listener, or its notifications POSTed to {@code /_ingest/storage}
 * by URL), Pub/Sub subscriptions on the emulator, and any binary-mode CloudEvent POSTed to
 * {@code /_ingest/cloudevent}.
 */
public final class EventarcRelay implements StandIn {
  private static final Logger LOG = Logger.getLogger(EventarcRelay.class.getName());
  private static final int REMEMBERED_EVENTS = 10_000;
  private static final String PUBSUB_SOURCE = "//pubsub.googleapis.com/";

  /** Startup settings; {@code pubSubEmulatorHost} null falls back to {@code PUBSUB_EMULATOR_HOST}. */
  public record Options(int port, RetryPolicy retry, Duration requestTimeout, String pubSubEmulatorHost) {
    public static Options defaults() {
      return new Options(0, RetryPolicy.defaults(), Duration.ofSeconds(60), null);
    }

    public Options withRetry(RetryPolicy policy) {
      return new Options(port, policy, requestTimeout, pubSubEmulatorHost);
    }

    public Options withPort(int value) {
      return new Options(value, retry, requestTimeout, pubSubEmulatorHost);
    }

    public Options withPubSubEmulatorHost(String hostPort) {
      return new Options(port, retry, requestTimeout, hostPort);
    }
  }

  private final Options options;
  private final Counters counters = new Counters();
  private final Map<String, List<Route>> routes = new ConcurrentHashMap<>();
  private final Map<String, CloudEvent> recent = new LinkedHashMap<>(16, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, CloudEvent> eldest) {
      return size() > REMEMBERED_EVENTS;
    }
  };
  private final List<DeliveryResult> results = new CopyOnWriteArrayList<>();
  private final List<PubSubSource> sources = new CopyOnWriteArrayList<>();
  private final List<Runnable> detachments = new CopyOnWriteArrayList<>();
  private final Deliverer deliverer;
  private final LocalServer server;

  private EventarcRelay(Options options) {
    this.options = options;
    this.deliverer = new Deliverer(options.retry(), options.requestTimeout(), counters, results::add);
    this.server = LocalServer.start(options.port(), new RelayApi(this));
  }

  public static EventarcRelay start() {
    return start(Options.defaults());
  }

  public static EventarcRelay start(Options options) {
    return new EventarcRelay(options);
  }

  /** Ingest and admin endpoint of this relay. */
  @Override
  public String baseUrl() {
    return server.baseUrl();
  }

  public int port() {
    return server.port();
  }

  /** Where a storage stand-in reaching this relay by URL sends its notifications ({@code Options.withNotifyUrl}). */
  public URI storageIngestUrl() {
    return URI.create(baseUrl() + "/_ingest/storage");
  }

  /** A trigger: events of a type, from one source or any ({@code source} null), go to a function. */
  private record Route(String source, URI target) {
    boolean matches(CloudEvent event) {
      return source == null || source.equals(event.source());
    }
  }

  /** Events of {@code eventType} go to {@code functionUrl} (a trigger); several functions may share a type. */
  public EventarcRelay route(String eventType, URI functionUrl) {
    routes.computeIfAbsent(eventType, t -> new CopyOnWriteArrayList<>()).add(new Route(null, functionUrl));
    return this;
  }

  /**
   * Messages published to {@code topic} ({@code projects/P/topics/T}) go to {@code functionUrl}: an Eventarc Pub/Sub
   * trigger names its topic, and an event's source is {@code //pubsub.googleapis.com/} + that topic.
   */
  public EventarcRelay routeTopic(String topic, URI functionUrl) {
    routes.computeIfAbsent(CloudEvent.PUBSUB_PUBLISHED, t -> new CopyOnWriteArrayList<>())
        .add(new Route(PUBSUB_SOURCE + topic, functionUrl));
    return this;
  }

  /** Relays every finalize notification of this (in-process) storage stand-in. */
  public EventarcRelay attach(StorageStandIn storage) {
    ObjectFinalizeListener listener = storageListener();
    storage.addListener(listener);
    detachments.add(() -> storage.removeListener(listener));
    return this;
  }

  public ObjectFinalizeListener storageListener() {
    return notification -> publish(StorageEvents.finalized(notification));
  }

  /** Pulls {@code projects/P/subscriptions/S} from the Pub/Sub emulator and relays each message. */
  public PubSubSource subscribe(String subscription) {
    String host = options.pubSubEmulatorHost() != null ? options.pubSubEmulatorHost()
        : System.getenv("PUBSUB_EMULATOR_HOST");
    if (host == null || host.isBlank()) {
      throw new IllegalStateException("no Pub/Sub emulator: set PUBSUB_EMULATOR_HOST or Options.pubSubEmulatorHost");
    }
    PubSubSource source = PubSubSource.start(host, subscription, this::publish);
    sources.add(source);
    return source;
  }

  /**
   * Delivers {@code event} to every function routed for its type; the future says how it ended (DELIVERED only
   * when every function accepted it).
   */
  public CompletableFuture<DeliveryResult.Outcome> publish(CloudEvent event) {
    counters.increment("received");
    synchronized (recent) {
      recent.put(event.id(), event);
    }
    List<URI> targets = routes.getOrDefault(event.type(), List.of()).stream().filter(route -> route.matches(event))
        .map(Route::target).toList();
    if (targets.isEmpty()) {
      counters.increment("unrouted");
      LOG.warning("eventarc relay has no function for " + event + "; not delivered");
      results.add(new DeliveryResult(event.id(), event.type(), null, DeliveryResult.Outcome.UNROUTED, 0,
          "no route for " + event.type(), Instant.now()));
      return CompletableFuture.completedFuture(DeliveryResult.Outcome.UNROUTED);
    }
    List<CompletableFuture<DeliveryResult.Outcome>> each = targets.stream()
        .map(target -> deliverer.deliver(event, target)).toList();
    return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(ignored -> {
      List<DeliveryResult.Outcome> outcomes = each.stream().map(CompletableFuture::join).toList();
      if (outcomes.contains(DeliveryResult.Outcome.ABANDONED)) {
        return DeliveryResult.Outcome.ABANDONED;
      }
      return outcomes.contains(DeliveryResult.Outcome.GAVE_UP) ? DeliveryResult.Outcome.GAVE_UP
          : DeliveryResult.Outcome.DELIVERED;
    });
  }

  /**
   * Delivers an event seen earlier once more, unchanged (same ce-id): a Pub/Sub redelivery of the same message,
   * or an Eventarc retry. (A doubled storage notification has a new id: ask the storage stand-in for that.)
   */
  public Optional<CompletableFuture<DeliveryResult.Outcome>> redeliver(String eventId) {
    CloudEvent event;
    synchronized (recent) {
      event = recent.get(eventId);
    }
    if (event == null) {
      return Optional.empty();
    }
    counters.increment("redelivered");
    return Optional.of(publish(event));
  }

  /** The most recent events, oldest first (up to 10,000). */
  public List<CloudEvent> events() {
    synchronized (recent) {
      return new ArrayList<>(recent.values());
    }
  }

  public List<DeliveryResult> results() {
    return List.copyOf(results);
  }

  /** received, attempts, retries, delivered, gaveUp, unrouted, redelivered. */
  public Counters counters() {
    return counters;
  }

  public long delivered() {
    return counters.get("delivered");
  }

  public long gaveUp() {
    return counters.get("gaveUp");
  }

  @Override
  public void close() {
    // Stop deliveries first: their Pub/Sub messages are nacked (ABANDONED) before the subscribers stop.
    detachments.forEach(Runnable::run);
    deliverer.close();
    sources.forEach(PubSubSource::close);
    server.close();
  }

  /** Short names for the two types this project uses. */
  static String eventType(String name) {
    return switch (name) {
      case "storage" -> CloudEvent.STORAGE_FINALIZED;
      case "pubsub" -> CloudEvent.PUBSUB_PUBLISHED;
      default -> name;
    };
  }
}
