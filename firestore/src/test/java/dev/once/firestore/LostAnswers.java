package dev.once.firestore;

import com.google.api.gax.grpc.InstantiatingGrpcChannelProvider;
import com.google.auth.Credentials;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import dev.once.local.emulator.FirestoreEmulator;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A wire-level fault for the real Firestore client: a gRPC interceptor on its channel that lets a call reach the
 * emulator, which carries it out, and then replaces the emulator's answer, whatever it was, with {@code UNAVAILABLE}
 * or {@code DEADLINE_EXCEEDED}, as if the answer had been lost on the way back. What the client then does is its
 * own: in google-cloud-firestore 3.47.0 {@code Commit} is resent on {@code UNAVAILABLE} (and
 * {@code RESOURCE_EXHAUSTED}), not on {@code DEADLINE_EXCEEDED}; {@code BeginTransaction} and {@code Rollback} on
 * both; a transaction whose commit fails is rolled back and its body run again. Tests count what really went over
 * the wire ({@link #calls}), so none of that is taken on trust.
 *
 * <p>Methods are gRPC bare names: {@code Commit}, {@code BeginTransaction}, {@code Rollback}, {@code BatchGetDocuments}.
 */
public final class LostAnswers implements ClientInterceptor {
  private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> lost = new ConcurrentHashMap<>();
  private final Map<String, Queue<Status.Code>> planned = new ConcurrentHashMap<>();
  private volatile String randomMethod;
  private volatile double randomShare;
  private volatile Random random;

  /** A client on the shared emulator whose calls pass through {@code faults}. */
  public static Firestore client(LostAnswers faults) {
    String hostPort = FirestoreEmulator.shared().hostPort();
    // The client dials the emulator on a channel of its own when its credentials are NoCredentials, and takes no
    // interceptor then; with the emulator's admin token ("owner") as credentials of our own it uses our channel.
    return FirestoreOptions.newBuilder()
        .setProjectId(TestFirestore.PROJECT)
        .setHost(hostPort)
        .setCredentials(new EmulatorOwner())
        .setChannelProvider(InstantiatingGrpcChannelProvider.newBuilder()
            .setEndpoint(hostPort)
            .setChannelConfigurator(channel -> channel.usePlaintext().intercept(faults))
            .build())
        .build()
        .getService();
  }

  /**
   * The token the emulator grants an admin client. Not Google credentials, which gRPC sends only over TLS (the
   * emulator speaks plaintext).
   */
  private static final class EmulatorOwner extends Credentials {
    private static final long serialVersionUID = 1L;

    @Override
    public String getAuthenticationType() {
      return "emulator";
    }

    @Override
    public Map<String, List<String>> getRequestMetadata(URI uri) {
      return Map.of("Authorization", List.of("Bearer owner"));
    }

    @Override
    public boolean hasRequestMetadata() {
      return true;
    }

    @Override
    public boolean hasRequestMetadataOnly() {
      return true;
    }

    @Override
    public void refresh() {
      // a fixed token
    }
  }

  /** The answers of the next {@code times} calls of {@code method} are lost, replaced by {@code how}. */
  public LostAnswers loseNext(String method, int times, Status.Code how) {
    Queue<Status.Code> queue = planned.computeIfAbsent(method, m -> new ConcurrentLinkedQueue<>());
    for (int i = 0; i < times; i++) {
      queue.add(how);
    }
    return this;
  }

  /** The next {@code times} calls of {@code method} are answered as usual (before the losses planned after them). */
  public LostAnswers letThrough(String method, int times) {
    return loseNext(method, times, Status.Code.OK);
  }

  /** From now on, a {@code share} of the calls of {@code method}, drawn from {@code seed}, lose their answer. */
  public LostAnswers loseAtRandom(String method, double share, long seed, Status.Code how) {
    this.random = new Random(seed);
    this.randomShare = share;
    this.randomMethod = method + "\n" + how.name();
    return this;
  }

  /** Lose nothing more; the counts stay. */
  public void stop() {
    planned.clear();
    randomMethod = null;
  }

  /** Calls of {@code method} that reached the emulator. */
  public int calls(String method) {
    return calls.getOrDefault(method, new AtomicInteger()).get();
  }

  /** Calls of {@code method} whose answer was lost. */
  public int lost(String method) {
    return lost.getOrDefault(method, new AtomicInteger()).get();
  }

  private Status.Code lossFor(String method) {
    Queue<Status.Code> queue = planned.get(method);
    Status.Code next = queue == null ? null : queue.poll();
    if (next != null) {
      return next == Status.Code.OK ? null : next;
    }
    String chosen = randomMethod;
    if (chosen != null && chosen.startsWith(method + "\n")) {
      Random draw = random;
      synchronized (draw) {
        if (draw.nextDouble() < randomShare) {
          return Status.Code.valueOf(chosen.substring(method.length() + 1));
        }
      }
    }
    return null;
  }

  @Override
  public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
    String name = method.getBareMethodName();
    calls.computeIfAbsent(name, m -> new AtomicInteger()).incrementAndGet();
    Status.Code loss = lossFor(name);
    ClientCall<Q, A> call = next.newCall(method, options);
    if (loss == null) {
      return call;
    }
    return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
      @Override
      public void start(Listener<A> listener, Metadata headers) {
        super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
          @Override
          public void onHeaders(Metadata answerHeaders) {
            // lost with the rest of the answer
          }

          @Override
          public void onMessage(A answer) {
            // lost: the emulator carried the call out, the client never hears so
          }

          @Override
          public void onClose(Status status, Metadata trailers) {
            lost.computeIfAbsent(name, m -> new AtomicInteger()).incrementAndGet();
            super.onClose(Status.fromCode(loss).withDescription("injected: " + name + " was carried out ("
                + status.getCode() + "), its answer lost"), new Metadata());
          }
        }, headers);
      }
    };
  }
}
