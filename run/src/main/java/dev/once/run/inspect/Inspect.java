package dev.once.run.inspect;

import dev.once.config.OnceSetting;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import dev.once.config.FirestoreClients;
import dev.once.config.Settings;
import dev.once.pipeline.Records;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.FirestoreLedger;
import dev.once.ledger.LedgerConfig;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.pipeline.Effects;
import dev.once.local.stack.Part;
import dev.once.local.stack.Ports;
import dev.once.run.RunConfig;
import dev.once.run.RunLock;
import dev.once.run.StackInfo;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * {@code dev/inspect KEY}: what the ledger knows about one key — every effect's state, attempts, fencing token,
 * lease, last error and outcome — and the analysis and billing entries, ending with a verdict for the operator
 * asked "was this invoice billed twice?". Reads Firestore only; writes nothing.
 */
public final class Inspect {
  static final int KNOWN = 0;
  static final int UNKNOWN = 1;
  static final int USAGE = 2;
  private static final long READ_TIMEOUT_SECONDS = 30;

  static final String HELP = """
      usage: dev/inspect KEY
        KEY: gcs:BUCKET/NAME#GENERATION (or gs://BUCKET/NAME#GENERATION), pubsub:MESSAGE_ID or a producer's
        idempotency_key, gemini:batches/ID or a Gemini batch job in any spelling (batches/ID, a bare id, a URL).
        Reads FIRESTORE_EMULATOR_HOST when set (project GOOGLE_CLOUD_PROJECT, default once-local); else, with
        GOOGLE_CLOUD_PROJECT, the real Firestore with application default credentials; else the emulator of the
        dev/run running here. ONCE_COLLECTION names the ledger's collection (default idempotency).
        Exit 0 when the key is known, 1 when nothing is known about it, 2 when Firestore cannot be read.""";

  private Inspect() {}

  public static void main(String[] args) {
    System.exit(run(args, System.getenv(), System.out, System.err));
  }

  /** Where to read: a Firestore client and a description for the header. */
  record Target(Firestore db, String description, String collection) {}

  static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
    if (args.length != 1 || args[0].isBlank() || args[0].equals("--help")) {
      (args.length == 1 && args[0].equals("--help") ? out : err).println(HELP);
      return args.length == 1 && args[0].equals("--help") ? KNOWN : USAGE;
    }
    Target target;
    try {
      target = connect(env);
    } catch (IllegalStateException e) {
      err.println("dev/inspect: " + e.getMessage());
      return USAGE;
    }
    try (Firestore db = target.db()) {
      return new Report(db, target.collection(), out).print(args[0], target.description());
    } catch (RuntimeException e) {
      err.println("dev/inspect: could not read Firestore (" + target.description() + "): " + e.getMessage());
      return USAGE;
    } catch (Exception e) {
      return KNOWN; // closing the client failed after the report was printed
    }
  }

  static Target connect(Map<String, String> env) {
    Settings settings = Settings.of(env);
    String emulator = settings.optional(OnceSetting.FIRESTORE_EMULATOR_HOST).orElse(null);
    String project = settings.optional(OnceSetting.GOOGLE_CLOUD_PROJECT).orElse(null);
    String collection = env.get(OnceSetting.ONCE_COLLECTION.name());
    if (emulator == null && project != null) {
      return new Target(FirestoreClients.create(settings), "Firestore of project " + project,
          settings.required(OnceSetting.ONCE_COLLECTION));
    }
    if (emulator == null) {
      // The dev/run of this checkout: its lock file says where its emulator listens.
      Optional<StackInfo> running = StackInfo.read(RunLock.file(RunConfig.DEFAULT_LOG_DIR)).filter(StackInfo::alive);
      Ports ports = running.map(StackInfo::portSet).orElseGet(() -> Ports.fromEnvironment(env));
      emulator = ports.hostPort(Part.FIRESTORE);
      project = running.map(StackInfo::project).orElse(RunConfig.PROJECT);
      if (collection == null || collection.isBlank()) {
        collection = running.map(StackInfo::collection).orElse(null);
      }
    }
    if (project == null) {
      project = RunConfig.PROJECT;
    }
    if (!listening(emulator)) {
      throw new IllegalStateException("no Firestore emulator answers on " + emulator + " (is dev/run running? or set"
          + " FIRESTORE_EMULATOR_HOST, or GOOGLE_CLOUD_PROJECT for the real Firestore)");
    }
    String resolved = collection == null || collection.isBlank() ? OnceSetting.ONCE_COLLECTION.defaultValue() : collection;
    return new Target(FirestoreClients.forEmulator(project, emulator),
        "Firestore emulator " + emulator + ", project " + project, resolved);
  }

  private static boolean listening(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1))),
          2000);
      return true;
    } catch (Exception e) {
      return false;
    }
  }

  /** The printed report for one typed key. */
  private static final class Report {
    private final Firestore db;
    private final String collection;
    private final FirestoreLedger ledger;
    private final PrintStream out;

    Report(Firestore db, String collection, PrintStream out) {
      this.db = db;
      this.collection = collection;
      this.ledger = new FirestoreLedger(db, LedgerConfig.defaults().withCollection(collection));
      this.out = out;
    }

    int print(String typed, String where) {
      List<IdempotencyKey> candidates = KeyCandidates.of(typed);
      boolean known = false;
      for (IdempotencyKey key : candidates) {
        Map<String, LedgerRecord> records = records(key);
        Optional<DocumentSnapshot> analysis = document(Records.ANALYSES, key);
        List<QueryDocumentSnapshot> bills = byKey(Records.BILLING, key);
        List<QueryDocumentSnapshot> jobDocuments = key.value().startsWith(GeminiCompletionKeys.PREFIX)
            ? jobDocuments(GeminiCompletionKeys.jobName(key)) : List.of();
        if (records.isEmpty() && analysis.isEmpty() && bills.isEmpty() && jobDocuments.isEmpty()) {
          continue;
        }
        if (known) {
          out.println();
        }
        known = true;
        out.println("key " + key + "   (" + where + ", collection " + collection + ")");
        printLedger(records);
        if (!jobDocuments.isEmpty()) {
          printJob(jobDocuments);
          continue;
        }
        analysis.ifPresent(this::printAnalysis);
        printBilling(bills);
        String job = analysis.map(a -> a.getString("job")).orElse(null);
        if (job != null) {
          IdempotencyKey jobKey = GeminiCompletionKeys.ofName(job);
          out.println("batch job " + jobKey + " (dev/inspect " + job + " for its ledger)");
          printLedger(records(jobKey), List.of(Effects.COMPLETE, Effects.PUBLISH));
        }
        out.println("verdict: " + verdict(bills.size()));
      }
      if (!known) {
        out.println("nothing is known about " + typed.strip() + " (" + where + ", collection " + collection + ")"
            + (candidates.size() > 1 ? "; looked for " + candidates : ""));
        return UNKNOWN;
      }
      return KNOWN;
    }

    private Map<String, LedgerRecord> records(IdempotencyKey key) {
      Map<String, LedgerRecord> records = new java.util.LinkedHashMap<>();
      for (String effect : Effects.ALL) {
        ledger.lookup(key, effect).ifPresent(r -> records.put(effect, r));
      }
      return records;
    }

    private void printLedger(Map<String, LedgerRecord> records) {
      printLedger(records, Effects.ALL);
    }

    private void printLedger(Map<String, LedgerRecord> records, List<String> effects) {
      out.println("ledger");
      for (String effect : effects) {
        LedgerRecord record = records.get(effect);
        if (record == null) {
          out.println(String.format("  %-13s —", effect));
          continue;
        }
        out.println(String.format("  %-13s %-9s attempts %d, token %d, created %s, updated %s", effect,
            record.state(), record.attempts(), record.token(), Values.instant(record.createdAt()),
            Values.instant(record.updatedAt())));
        if (record.state() == RecordState.CLAIMED) {
          out.println(String.format("  %-13s lease %s", "", record.leaseLive()
              ? "live until " + record.leaseExpiresAt() + " (a delivery is working on it; others wait)"
              : "expired at " + Values.instant(record.leaseExpiresAt()) + " (the next delivery takes it over)"));
        }
        if (!record.outcome().isEmpty()) {
          out.println(String.format("  %-13s outcome %s", "", Values.text(record.outcome())));
        }
        if (record.error() != null) {
          out.println(String.format("  %-13s %s %s", "", record.state() == RecordState.REJECTED ? "refused:" : "last error:",
              Values.text(record.error())));
        }
      }
    }

    private void printAnalysis(DocumentSnapshot analysis) {
      out.println("analysis  " + Records.ANALYSES + "/" + analysis.getId());
      out.println("  status " + Values.text(analysis.get("status")) + ", mode " + Values.text(analysis.get("mode"))
          + ", model " + Values.text(analysis.get("model")) + ", job " + Values.text(analysis.get("job"))
          + ", updated " + Values.text(analysis.get("updatedAt")));
      if (analysis.get("reason") != null) {
        out.println("  reason " + Values.text(analysis.get("reason")));
      }
      if (analysis.get("invoice") != null) {
        out.println("  invoice " + Values.text(analysis.get("invoice")));
      }
    }

    private void printBilling(List<QueryDocumentSnapshot> bills) {
      if (bills.isEmpty()) {
        out.println("billing   none");
      }
      for (QueryDocumentSnapshot bill : bills) {
        out.println("billing   " + Records.BILLING + "/" + bill.getId());
        out.println("  model " + Values.text(bill.get("model")) + ", tokens " + Values.text(bill.get("totalTokens"))
            + " (" + Values.text(bill.get("promptTokens")) + " in, " + Values.text(bill.get("outputTokens")) + " out)"
            + ", cost " + Values.text(bill.get("costMicroUsd")) + " µUSD" + (Boolean.TRUE.equals(bill.get("batch"))
                ? " (batch price)" : "") + ", billed " + Values.text(bill.get("billedAt")));
      }
    }

    private void printJob(List<QueryDocumentSnapshot> documents) {
      out.println("documents of this job");
      int billedOnce = 0;
      for (QueryDocumentSnapshot document : documents) {
        String key = document.getString("key");
        int bills = key == null ? 0 : byKey(Records.BILLING, IdempotencyKey.of(key)).size();
        billedOnce += bills == 1 ? 1 : 0;
        out.println("  " + key + "  status " + Values.text(document.get("status")) + ", " + verdict(bills));
      }
      out.println("verdict: " + documents.size() + " document(s), " + billedOnce + " billed once"
          + (billedOnce == documents.size() ? "" : " (dev/inspect each document for the others)"));
    }

    private static String verdict(int bills) {
      return switch (bills) {
        case 0 -> "not billed";
        case 1 -> "billed once";
        default -> "billed " + bills + " times";
      };
    }

    private Optional<DocumentSnapshot> document(String collectionName, IdempotencyKey key) {
      DocumentSnapshot snapshot = await(db.collection(collectionName).document(key.documentId()).get());
      return snapshot.exists() ? Optional.of(snapshot) : Optional.empty();
    }

    /** By the {@code key} field, not the id: a second entry under another id would show up too. */
    private List<QueryDocumentSnapshot> byKey(String collectionName, IdempotencyKey key) {
      return new ArrayList<>(await(db.collection(collectionName).whereEqualTo("key", key.value()).get()).getDocuments());
    }

    private List<QueryDocumentSnapshot> jobDocuments(String job) {
      return new ArrayList<>(await(db.collection(Records.ANALYSES).whereEqualTo("job", job).limit(100).get())
          .getDocuments());
    }

    private static <T> T await(com.google.api.core.ApiFuture<T> future) {
      try {
        return future.get(READ_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
        throw new IllegalStateException(e.toString(), e);
      }
    }
  }
}
