package dev.once.local.eventarc;

import dev.once.local.http.RetryPolicy;
import dev.once.wire.eventarc.CloudEvent;
import dev.once.wire.eventarc.StorageEvents;
import dev.once.wire.storage.ObjectFinalized;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Sends a list of CloudEvents straight to several instances of one function, round-robin, from a fixed pool of
 * sender threads, without the relay (which gives every routed function every event): how the duplicate-storm
 * benchmark and test spread one event stream over several invoker processes. As Eventarc does, an answer other
 * than 2xx (an in-flight duplicate is thrown back as a 500) or no answer is retried after a backoff, on the next
 * instance; retries are counted, and what still fails after the policy's attempts is reported, not hidden.
 */
public final class DirectSender {
  /** What one {@link #send} came to; {@code retriedAnswers} counts the answers that caused a retry. */
  public record Report(int events, long nanos, long retries, Map<String, Long> retriedAnswers, List<String> gaveUp) {
    public double perSecond() {
      return events / (nanos / 1e9);
    }

    public double seconds() {
      return nanos / 1e9;
    }
  }

  private final List<URI> targets;
  private final int threads;
  private final RetryPolicy policy;
  private final Duration requestTimeout;
  private final HttpClient http = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1) // the invoker speaks HTTP/1.1; skip the h2c upgrade offer
      .connectTimeout(Duration.ofSeconds(5))
      .build();

  public DirectSender(List<URI> targets, int threads, RetryPolicy policy, Duration requestTimeout) {
    if (targets.isEmpty() || threads < 1) {
      throw new IllegalArgumentException("need at least one target and one thread");
    }
    this.targets = List.copyOf(targets);
    this.threads = threads;
    this.policy = policy;
    this.requestTimeout = requestTimeout;
  }

  /**
   * The finalize event Eventarc makes of a bucket notification (the stand-in's {@code renotify} makes a doubled
   * notification: a new event id for the same generation).
   */
  public static CloudEvent finalized(ObjectFinalized notification) {
    return StorageEvents.finalized(notification);
  }

  /** Sends every event (the i-th first to target i mod n) and returns once each was accepted or given up. */
  public Report send(List<CloudEvent> events) throws InterruptedException {
    AtomicInteger next = new AtomicInteger();
    LongAdder retries = new LongAdder();
    Map<String, LongAdder> answers = new ConcurrentHashMap<>();
    List<String> gaveUp = Collections.synchronizedList(new ArrayList<>());
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    long begin = System.nanoTime();
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        workers.add(pool.submit(() -> {
          for (int i = next.getAndIncrement(); i < events.size(); i = next.getAndIncrement()) {
            String failure = deliver(events.get(i), i, retries, answers);
            if (failure != null) {
              gaveUp.add(events.get(i).id() + ": " + failure);
            }
          }
          return null;
        }));
      }
      for (Future<?> worker : workers) {
        try {
          worker.get();
        } catch (ExecutionException e) {
          throw new IllegalStateException("a sender thread failed", e.getCause());
        }
      }
    } finally {
      pool.shutdownNow();
      pool.awaitTermination(10, TimeUnit.SECONDS);
    }
    long nanos = System.nanoTime() - begin;
    Map<String, Long> counted = new TreeMap<>();
    answers.forEach((answer, count) -> counted.put(answer, count.sum()));
    return new Report(events.size(), nanos, retries.sum(), counted, List.copyOf(gaveUp));
  }

  /** One event until a 2xx; null when delivered, else the last answer. */
  private String deliver(CloudEvent event, int index, LongAdder retries, Map<String, LongAdder> answers)
      throws InterruptedException {
    Instant first = Instant.now();
    String last = "";
    for (int attempt = 1;; attempt++) {
      URI target = targets.get((index + attempt - 1) % targets.size());
      try {
        int status = http.send(BinaryMode.request(event, target, requestTimeout),
            HttpResponse.BodyHandlers.discarding()).statusCode();
        if (status / 100 == 2) {
          return null;
        }
        last = "HTTP " + status;
      } catch (IOException e) {
        last = e.getClass().getSimpleName();
      }
      Optional<Duration> pause = policy.nextPause(attempt, first);
      if (pause.isEmpty()) {
        return last + " after " + attempt + " attempts";
      }
      retries.increment();
      answers.computeIfAbsent(last, k -> new LongAdder()).increment();
      Thread.sleep(pause.get());
    }
  }
}
