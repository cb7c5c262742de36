package dev.once.bench;

import com.google.api.gax.core.FixedCredentialsProvider;
import com.google.api.gax.grpc.InstantiatingGrpcChannelProvider;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import com.google.firestore.v1.BatchGetDocumentsResponse;
import com.google.firestore.v1.CommitRequest;
import com.google.firestore.v1.CommitResponse;
import com.google.firestore.v1.Document;
import com.google.firestore.v1.Precondition;
import com.google.firestore.v1.RunAggregationQueryRequest;
import com.google.firestore.v1.RunAggregationQueryResponse;
import com.google.firestore.v1.RunQueryResponse;
import com.google.firestore.v1.StructuredAggregationQuery;
import com.google.firestore.v1.Write;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Counts every call a Firestore client makes, by gRPC method ({@code Commit}, {@code BatchGetDocuments},
 * {@code RunQuery}, {@code BeginTransaction}, {@code Rollback}, ...), and describes each commit's writes, so the
 * cost benchmark reports exactly what one event costs. Counting on the channel sees what the client sends,
 * retries included, with no change to the code under measurement.
 *
 * <p>Beside the calls, the documents as Firestore bills them ({@link Billed}): a read per document a get returns
 * or finds missing, per document a query returns (at least one per query), per thousand index entries an aggregation
 * counts (at least one); a write per document a successful commit writes (however many fields or transforms), a
 * delete per document it deletes; and the documents written with an {@code expireAt}, each deleted later by a TTL
 * policy, which Firestore bills as a delete.
 */
final class FirestoreCalls implements ClientInterceptor {
  /** Calls that read documents (Firestore bills each document read). */
  static final List<String> READS = List.of("BatchGetDocuments", "GetDocument", "RunQuery", "RunAggregationQuery");

  /** The field TTL policies delete by (terraform/firestore.tf: the ledger, the spending guard's markers). */
  static final String EXPIRE_AT = "expireAt";

  private final Map<String, Long> calls = new TreeMap<>();
  private long reads;
  private long writes;
  private long deletes;
  private final Set<String> expiring = new HashSet<>();
  private final List<String> commits = new ArrayList<>();
  /** Ledger record name to its effect, learnt from the claim that created it (later writes do not carry it). */
  private final Map<String, String> effects = new ConcurrentHashMap<>();

  /**
   * Documents as Firestore bills them: read, written, deleted, and written with an expiry (each a delete later, by
   * the TTL service).
   */
  record Billed(long reads, long writes, long deletes, long expiring) {
    Billed minus(Billed earlier) {
      return new Billed(reads - earlier.reads, writes - earlier.writes, deletes - earlier.deletes,
          expiring - earlier.expiring);
    }
  }

  /** What was counted up to one moment; {@link #since} gives the calls between two. */
  record Snapshot(Map<String, Long> calls, List<String> commits, Billed documents) {
    Snapshot since(Snapshot earlier) {
      Map<String, Long> delta = new TreeMap<>();
      calls.forEach((method, n) -> {
        long d = n - earlier.calls.getOrDefault(method, 0L);
        if (d != 0) {
          delta.put(method, d);
        }
      });
      return new Snapshot(delta, List.copyOf(commits.subList(earlier.commits.size(), commits.size())),
          documents.minus(earlier.documents));
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
    return new Snapshot(new TreeMap<>(calls), List.copyOf(commits),
        new Billed(reads, writes, deletes, expiring.size()));
  }

  @Override
  public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
    synchronized (this) {
      calls.merge(method.getBareMethodName(), 1L, Long::sum);
    }
    return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
      private CommitRequest commit;
      /** An aggregation that counts: its count is the index entries it read; one that only sums bills one read. */
      private boolean counts;
      private long returned;
      private boolean minimumBilled;

      @Override
      public void start(Listener<A> listener, Metadata headers) {
        super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
          // Counted before the client hears of it: its future may complete on a message, before the call closes.
          @Override
          public void onMessage(A message) {
            long read = billedReads(message, counts);
            returned += read;
            settle(read, message instanceof CommitResponse ? commit : null);
            // The query's last answer: the client may complete its future on it, before the call closes, so an empty
            // query's one read is counted here, not left to onClose (a count that came late, once in a run).
            if (message instanceof RunQueryResponse answer && answer.getDone()) {
              billMinimum();
            }
            super.onMessage(message);
          }

          @Override
          public void onClose(Status status, Metadata trailers) {
            String name = method.getBareMethodName();
            if (status.isOk() && (name.equals("RunQuery") || name.equals("RunAggregationQuery"))) {
              billMinimum();
            }
            super.onClose(status, trailers);
          }

          /** A query is billed one read at least. */
          private void billMinimum() {
            if (returned == 0 && !minimumBilled) {
              minimumBilled = true;
              settle(1, null);
            }
          }
        }, headers);
      }

      @Override
      public void sendMessage(Q message) {
        if (message instanceof RunAggregationQueryRequest request) {
          counts = request.getStructuredAggregationQuery().getAggregationsList().stream()
              .allMatch(StructuredAggregationQuery.Aggregation::hasCount);
        }
        if (message instanceof CommitRequest request) {
          commit = request;
          String description = describe(request);
          synchronized (FirestoreCalls.this) {
            commits.add(description);
          }
        }
        super.sendMessage(message);
      }
    };
  }

  /**
   * The reads one answer of a read call is billed: documents got (found or missing) or returned; for an aggregation,
   * a read per 1,000 index entries, told by its count ({@code counts}), else one (the sums of a few documents).
   */
  private static long billedReads(Object message, boolean counts) {
    return switch (message) {
      case BatchGetDocumentsResponse got -> got.hasFound() || got.hasMissing() ? 1 : 0;
      case Document doc -> 1; // GetDocument
      case RunQueryResponse query -> query.hasDocument() ? 1 : 0;
      case RunAggregationQueryResponse aggregation when aggregation.hasResult() && counts ->
        aggregation.getResult().getAggregateFieldsMap().values().stream()
            .mapToLong(v -> Math.max(1, (v.getIntegerValue() + 999) / 1000)).max().orElse(1);
      case RunAggregationQueryResponse aggregation -> aggregation.hasResult() ? 1 : 0;
      default -> 0;
    };
  }

  /** Reads answered, and a commit's documents once it is answered (one that fails, a precondition, writes nothing). */
  private synchronized void settle(long read, CommitRequest commit) {
    reads += read;
    if (commit == null) {
      return;
    }
    for (Write write : commit.getWritesList()) {
      if (write.hasDelete()) {
        deletes++;
      } else {
        writes++;
        if (write.hasUpdate() && write.getUpdate().getFieldsMap().containsKey(EXPIRE_AT)) {
          expiring.add(write.getUpdate().getName());
        }
      }
    }
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
