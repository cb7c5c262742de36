package dev.once.functions.it;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.pubsub.v1.PublishRequest;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.local.http.AmbiguousFailure;
import dev.once.local.net.GrpcProxy;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The Pub/Sub emulator as the functions reach it ({@link #hostPort()}, their {@code PUBSUB_EMULATOR_HOST}), with
 * publishes that are carried out and then fail: a {@link GrpcProxy} in front of the emulator.
 * {@link #failFirstPublishOf} makes the first publish of each key under a prefix fail once the emulator has stored
 * the message, as an {@link AmbiguousFailure} says: its answer sent after a delay past the client's deadline, the
 * client's connection reset, or INTERNAL — the gRPC code of a 500. Counts, per {@code idempotency_key}, the
 * publishes the emulator carried out and those failed on purpose.
 */
final class PubSubFaults implements GrpcProxy.Faults, AutoCloseable {
  static final String PUBLISH = "google.pubsub.v1.Publisher/Publish";

  private final GrpcProxy proxy;
  private final Map<String, AmbiguousFailure> armed = new ConcurrentHashMap<>();
  private final Set<String> failedOnce = ConcurrentHashMap.newKeySet();
  /** Armed by {@link #failFirstPublishOfNth}: the keys under its prefix published since, in order. */
  private final Map<String, Nth> nth = new ConcurrentHashMap<>();

  private record Nth(int n, AmbiguousFailure failure, Set<String> seen) {}

  private final Map<String, AtomicInteger> carriedOut = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> failed = new ConcurrentHashMap<>();

  private PubSubFaults(String emulatorHostPort) {
    proxy = GrpcProxy.start(emulatorHostPort, this);
  }

  static PubSubFaults start(String emulatorHostPort) {
    return new PubSubFaults(emulatorHostPort);
  }

  /** Where the functions reach Pub/Sub. */
  String hostPort() {
    return proxy.hostPort();
  }

  /** From now on, the first publish of each key starting with {@code keyPrefix} fails as {@code failure} says. */
  void failFirstPublishOf(String keyPrefix, AmbiguousFailure failure) {
    armed.put(keyPrefix, failure);
  }

  /**
   * From now on, of the keys starting with {@code keyPrefix}, the {@code n}th to be published fails its first publish
   * as {@code failure} says (a batch job's documents are published one after another: half-way through them).
   */
  void failFirstPublishOfNth(String keyPrefix, int n, AmbiguousFailure failure) {
    nth.put(keyPrefix, new Nth(n, failure, new LinkedHashSet<>()));
  }

  /** Publishes of {@code key} the emulator carried out (each a message on the topic). */
  int carriedOut(String key) {
    return carriedOut.getOrDefault(key, new AtomicInteger()).get();
  }

  /** Publishes of {@code key} carried out, then failed on purpose. */
  int failed(String key) {
    return failed.getOrDefault(key, new AtomicInteger()).get();
  }

  @Override
  public boolean watches(String method) {
    return method.equals(PUBLISH);
  }

  @Override
  public Optional<AmbiguousFailure> carriedOut(String method, byte[] request) {
    Optional<String> key = keyOf(request);
    key.ifPresent(k -> carriedOut.computeIfAbsent(k, x -> new AtomicInteger()).incrementAndGet());
    Optional<AmbiguousFailure> failure = key.flatMap(this::failureFor);
    failure.ifPresent(f -> failed.computeIfAbsent(key.get(), x -> new AtomicInteger()).incrementAndGet());
    return failure;
  }

  /** The failure armed for the first publish of {@code key}, taken once. */
  private Optional<AmbiguousFailure> failureFor(String key) {
    for (Map.Entry<String, Nth> entry : nth.entrySet()) {
      Nth target = entry.getValue();
      synchronized (target) {
        if (key.startsWith(entry.getKey()) && target.seen().add(key) && target.seen().size() == target.n()
            && failedOnce.add(key)) {
          nth.remove(entry.getKey());
          return Optional.of(target.failure());
        }
      }
    }
    return armed.entrySet().stream().filter(e -> key.startsWith(e.getKey())).map(Map.Entry::getValue).findFirst()
        .filter(failure -> failedOnce.add(key));
  }

  private static Optional<String> keyOf(byte[] request) {
    try {
      return PublishRequest.parseFrom(request).getMessagesList().stream().map(PubsubMessage::getAttributesMap)
          .map(attributes -> attributes.get("idempotency_key")).filter(Objects::nonNull).findFirst();
    } catch (InvalidProtocolBufferException e) {
      return Optional.empty();
    }
  }

  @Override
  public void close() {
    proxy.close();
  }
}
