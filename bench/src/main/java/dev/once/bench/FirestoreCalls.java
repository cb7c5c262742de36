package dev.once.bench;

import com.google.api.gax.core.FixedCredentialsProvider;
import com.google.api.gax.grpc.InstantiatingGrpcChannelProvider;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import com.google.firestore.v1.CommitRequest;
import com.google.firestore.v1.Precondition;
import com.google.firestore.v1.Write;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.MethodDescriptor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Counts every call a Firestore client makes, by gRPC method ({@code Commit}, {@code BatchGetDocuments},
 * {@code RunQuery}, {@code BeginTransaction}, {@code Rollback}, ...), and describes each commit's writes, so the
 * cost benchmark reports exactly what one event costs. Counting on the channel sees what the client sends,
 * retries included, with no change to the code under measurement.
 */
final class FirestoreCalls implements ClientInterceptor {
  /** Calls that read documents (Firestore bills each document read). */
  static final List<String> READS = List.of("BatchGetDocuments", "GetDocument", "RunQuery", "RunAggregationQuery");

  private final Map<String, Long> calls = new TreeMap<>();
  private final List<String> commits = new ArrayList<>();
  /** Ledger record name to its effect, learnt from the claim that created it (later writes do not carry it). */
  private final Map<String, String> effects = new java.util.concurrent.ConcurrentHashMap<>();

  /** What was counted up to one moment; {@link #since} gives the calls between two. */
  record Snapshot(Map<String, Long> calls, List<String> commits) {
    Snapshot since(Snapshot earlier) {
      Map<String, Long> delta = new TreeMap<>();
      calls.forEach((method, n) -> {
        long d = n - earlier.calls.getOrDefault(method, 0L);
        if (d != 0) {
          delta.put(method, d);
        }
      });
      return new Snapshot(delta, List.copyOf(commits.subList(earlier.commits.size(), commits.size())));
    }

    long reads() {
      return READS.stream().mapToLong(m -> calls.getOrDefault(m, 0L)).sum();
    }

    long commitCount() {
      return calls.getOrDefault("Commit", 0L);
    }

    /** Calls that are neither reads nor commits (transactions begun or rolled back, listens, ...). */
    Map<String, Long> others() {
      Map<String, Long> rest = new TreeMap<>(calls);
      READS.forEach(rest::remove);
      rest.remove("Commit");
      return rest;
    }
  }

  /**
   * A client for the emulator at {@code hostPort} whose channel goes through {@code calls}. With
   * {@code NoCredentials} the client would dial the emulator on a channel of its own and skip the provider, so
   * it gets the emulator's fixed "Bearer owner" header instead ({@link FirestoreOptions.EmulatorCredentials}: the
   * emulator's convention for an all-powerful local caller, not a credential).
   */
  static Firestore client(String projectId, String hostPort, FirestoreCalls calls) {
    return FirestoreOptions.newBuilder()
        .setProjectId(projectId)
        .setChannelProvider(InstantiatingGrpcChannelProvider.newBuilder()
            .setEndpoint(hostPort)
            .setChannelConfigurator(builder -> builder.usePlaintext().intercept(calls))
            .build())
        .setCredentialsProvider(FixedCredentialsProvider.create(new FirestoreOptions.EmulatorCredentials()))
        .build()
        .getService();
  }

  synchronized Snapshot snapshot() {
    return new Snapshot(new TreeMap<>(calls), List.copyOf(commits));
  }

  @Override
  public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
    synchronized (this) {
      calls.merge(method.getBareMethodName(), 1L, Long::sum);
    }
    return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
      @Override
      public void sendMessage(Q message) {
        if (message instanceof CommitRequest commit) {
          String description = describe(commit);
          synchronized (FirestoreCalls.this) {
            commits.add(description);
          }
        }
        super.sendMessage(message);
      }
    };
  }

  /** e.g. "create idempotency[analyse]", "update-if-unchanged idempotency[analyse] + merge analyses + set billing". */
  String describe(CommitRequest commit) {
    List<String> writes = new ArrayList<>();
    for (Write write : commit.getWritesList()) {
      String name = name(write);
      if (write.hasUpdate() && write.getUpdate().getFieldsMap().containsKey("effect")) {
        effects.put(name, write.getUpdate().getFieldsMap().get("effect").getStringValue());
      }
      String effect = effects.get(name);
      writes.add(kind(write) + " " + collection(name) + (effect == null ? "" : "[" + effect + "]"));
    }
    return String.join(" + ", writes) + (commit.getTransaction().isEmpty() ? "" : " (in a transaction)");
  }

  private static String kind(Write write) {
    if (write.hasDelete()) {
      return "delete";
    }
    if (write.hasCurrentDocument()) {
      Precondition precondition = write.getCurrentDocument();
      if (precondition.hasUpdateTime()) {
        return "update-if-unchanged";
      }
      return precondition.getExists() ? "update" : "create";
    }
    return write.hasUpdateMask() ? "merge" : "set";
  }

  private static String name(Write write) {
    return write.hasUpdate() ? write.getUpdate().getName()
        : write.hasDelete() ? write.getDelete() : write.getTransform().getDocument();
  }

  private static String collection(String name) {
    String[] path = name.split("/");
    return path.length >= 2 ? path[path.length - 2] : name;
  }
}
