package dev.once.functions.it;

import com.google.protobuf.ByteString;
import dev.once.local.http.AmbiguousFailure;
import dev.once.local.net.GrpcProxy;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The Firestore emulator as functions reach it ({@link #hostPort()}, their {@code FIRESTORE_EMULATOR_HOST}), with
 * commits that are applied and then fail for their caller: a {@link GrpcProxy} in front of the emulator.
 * {@link #failOnceCommitHolding} picks one commit among a function's many calls by what it holds (a document's key
 * and the value a record turns to: protobuf keeps strings as their UTF-8 bytes); once the emulator applied it, its
 * answer is lost as an {@link AmbiguousFailure} says. Counts the commits failed so, per failure.
 */
final class FirestoreFaults implements GrpcProxy.Faults, AutoCloseable {
  static final String COMMIT = "google.firestore.v1.Firestore/Commit";

  /** A commit to fail: every part in its request, and how. */
  private record Target(List<ByteString> parts, AmbiguousFailure failure) {}

  private final GrpcProxy proxy;
  private final List<Target> armed = new CopyOnWriteArrayList<>();
  private final Map<AmbiguousFailure, AtomicInteger> failed = new ConcurrentHashMap<>();

  FirestoreFaults(String emulatorHostPort) {
    proxy = GrpcProxy.start(emulatorHostPort, this);
  }

  /** Where the functions reach Firestore. */
  String hostPort() {
    return proxy.hostPort();
  }

  /** The next commit holding every one of {@code parts} is applied, then fails as {@code failure} says. Once. */
  void failOnceCommitHolding(AmbiguousFailure failure, String... parts) {
    armed.add(new Target(Arrays.stream(parts).map(ByteString::copyFromUtf8).toList(), failure));
  }

  /** Commits applied, then failed {@code failure}'s way. */
  int failed(AmbiguousFailure failure) {
    return failed.getOrDefault(failure, new AtomicInteger()).get();
  }

  /** Fail nothing more; the counts stay. */
  void stop() {
    armed.clear();
  }

  @Override
  public boolean watches(String method) {
    return method.equals(COMMIT);
  }

  @Override
  public Optional<AmbiguousFailure> carriedOut(String method, byte[] request) {
    ByteString body = ByteString.copyFrom(request);
    for (Target target : armed) {
      if (target.parts().stream().allMatch(part -> contains(body, part)) && armed.remove(target)) {
        failed.computeIfAbsent(target.failure(), f -> new AtomicInteger()).incrementAndGet();
        return Optional.of(target.failure());
      }
    }
    return Optional.empty();
  }

  private static boolean contains(ByteString body, ByteString part) {
    for (int i = 0; i + part.size() <= body.size(); i++) {
      if (body.substring(i, i + part.size()).equals(part)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void close() {
    proxy.close();
  }
}
