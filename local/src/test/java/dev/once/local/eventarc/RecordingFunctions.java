package dev.once.local.eventarc;

import com.google.cloud.functions.CloudEventsFunction;
import io.cloudevents.CloudEvent;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** Tiny CloudEvent functions the real invoker runs; they record what reached them (same JVM, static state). */
final class RecordingFunctions {
  private RecordingFunctions() {}

  /** Accepts everything. */
  public static final class Recording implements CloudEventsFunction {
    static final List<CloudEvent> RECEIVED = new CopyOnWriteArrayList<>();

    @Override
    public void accept(CloudEvent event) {
      RECEIVED.add(event);
    }
  }

  /** Fails the first two deliveries of each event id, then accepts. */
  public static final class FailsTwice implements CloudEventsFunction {
    static final Map<String, AtomicInteger> CALLS = new ConcurrentHashMap<>();

    @Override
    public void accept(CloudEvent event) {
      if (CALLS.computeIfAbsent(event.getId(), id -> new AtomicInteger()).incrementAndGet() <= 2) {
        throw new IllegalStateException("failing on purpose");
      }
    }
  }

  /** Always fails. */
  public static final class AlwaysFails implements CloudEventsFunction {
    static final Map<String, AtomicInteger> CALLS = new ConcurrentHashMap<>();

    @Override
    public void accept(CloudEvent event) {
      CALLS.computeIfAbsent(event.getId(), id -> new AtomicInteger()).incrementAndGet();
      throw new IllegalStateException("failing on purpose");
    }
  }
}
