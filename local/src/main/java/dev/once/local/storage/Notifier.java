package dev.once.local.storage;

import dev.once.wire.http.Counters;
import dev.once.wire.storage.ObjectFinalized;
import dev.once.wire.storage.StoredObject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Fans finalize notifications out to listeners on one thread, so they arrive in write order and never hold up
 * the upload that caused them (GCS notifies asynchronously too).
 */
final class Notifier implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(Notifier.class.getName());

  private final List<ObjectFinalizeListener> listeners = new CopyOnWriteArrayList<>();
  private final List<ObjectFinalized> sent = new CopyOnWriteArrayList<>();
  private final ExecutorService dispatcher = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "storage-notifier");
    t.setDaemon(true);
    return t;
  });
  // Eventarc storage event ids are decimal strings (they are Pub/Sub message ids underneath).
  private final AtomicLong nextId =
      new AtomicLong(ThreadLocalRandom.current().nextLong(1_000_000_000_000L, 9_000_000_000_000L));
  private final Counters counters;
  private volatile boolean twice;
  private volatile boolean withheld;

  Notifier(Counters counters) {
    this.counters = counters;
  }

  void addListener(ObjectFinalizeListener listener) {
    listeners.add(listener);
  }

  void removeListener(ObjectFinalizeListener listener) {
    listeners.remove(listener);
  }

  void notifyTwice(boolean enabled) {
    twice = enabled;
  }

  void withhold(boolean enabled) {
    withheld = enabled;
  }

  List<ObjectFinalized> sent() {
    return List.copyOf(sent);
  }

  /** A new generation was written: one notification, or two with different event ids when doubling is on. */
  List<ObjectFinalized> finalized(StoredObject object, String objectJson) {
    List<ObjectFinalized> events = new ArrayList<>();
    events.add(send(object, objectJson));
    if (twice) {
      events.add(send(object, objectJson));
    }
    return events;
  }

  /** One more notification for an existing generation, with a new event id (a doubled bucket notification). */
  ObjectFinalized again(StoredObject object, String objectJson) {
    return send(object, objectJson);
  }

  private ObjectFinalized send(StoredObject object, String objectJson) {
    ObjectFinalized event = new ObjectFinalized(Long.toString(nextId.incrementAndGet()), object.updated(),
        object.bucket(), object.name(), object.generation(), objectJson);
    sent.add(event);
    counters.increment("notifications");
    // Who is told is decided now, as the generation is written: a listener added or removed later, or a withholding
    // turned off, changes nothing for this event, however late the dispatcher gets to it.
    List<ObjectFinalizeListener> told = withheld ? List.of() : List.copyOf(listeners);
    dispatcher.execute(() -> {
      for (ObjectFinalizeListener listener : told) {
        try {
          listener.onFinalize(event);
        } catch (RuntimeException e) {
          LOG.log(Level.WARNING, "a finalize listener failed for event " + event.eventId(), e);
        }
      }
    });
    return event;
  }

  @Override
  public void close() {
    dispatcher.shutdown();
    try {
      dispatcher.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    dispatcher.shutdownNow();
  }
}
