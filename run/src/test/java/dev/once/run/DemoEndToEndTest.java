package dev.once.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.NoCredentials;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageOptions;
import dev.once.firestore.FirestoreClients;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.process.ChildProcess;
import dev.once.local.stack.FunctionJars;
import dev.once.local.stack.LocalStack;
import dev.once.local.stack.Part;
import dev.once.local.stack.Ports;
import dev.once.local.stack.Topology;
import dev.once.pipeline.Effects;
import dev.once.pipeline.RecordWrites;
import dev.once.run.demo.Demo;
import dev.once.run.demo.DemoReport;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The demo end to end, as {@code dev/run --demo} runs it: the whole stack started from the runner's own
 * {@link RunConfig} (the same parts, on free ports), the demo in sync mode, the functions restarted in batch mode,
 * the demo again, then everything stopped. Each demo's verdict must be OK, and this test checks Firestore itself too: one analysis
 * and at most one billing entry per uploaded document. One stack for all
 * of it (starting one takes half a minute here), so the steps run in order.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DemoEndToEndTest {
  private static final Set<String> FINAL = Set.of("analysed", "failed", "rejected");

  private RunConfig config;
  private LocalStack stack;
  private Firestore db;
  private Storage gcs;
  private final List<String> progress = new ArrayList<>();
  private DemoReport syncReport;

  @BeforeAll
  void start() {
    Path logs = Path.of(System.getProperty("once.logDir", "target/test-run"), "demo-" + System.nanoTime());
    config = RunConfig.of(Mode.SYNC, Ports.free(), logs);
    // As dev/run --demo runs it: the batch demo's one job is its two accepted samples, full by count, however far
    // apart a loaded machine queues them (the restart in batch mode keeps the environment).
    stack = config.stack().env("BATCH_MAX_WAIT_SECONDS", RunConfig.DEMO_BATCH_MAX_WAIT_SECONDS)
        .jars(FunctionJars.locate().check()).progress(progress::add).start();
    Ports ports = config.ports();
    db = FirestoreClients.forEmulator(RunConfig.PROJECT, ports.hostPort(Part.FIRESTORE));
    gcs = StorageOptions.http().setHost(ports.url(Part.STORAGE)).setProjectId(RunConfig.PROJECT)
        .setCredentials(NoCredentials.getInstance()).build().getService();
  }

  @AfterAll
  void stop() throws Exception {
    db.close();
    gcs.close();
    stack.close();
  }

  private DemoReport demo() {
    DemoReport report = Demo.run(StackInfo.of(config, ProcessHandle.current().pid(), stack), progress::add);
    assertTrue(report.ok(), String.join("\n", report.render()));
    return report;
  }

  /** Firestore, read here and not by the demo: per uploaded object one analysis, and a bill only if analysed. */
  private void eachUploadAnalysedOnce_andBilledAtMostOnce(DemoReport report, boolean batch) throws Exception {
    List<Blob> uploads = new ArrayList<>();
    gcs.list(Topology.BUCKET, Storage.BlobListOption.prefix(report.folder())).iterateAll().forEach(uploads::add);
    assertEquals(4, uploads.size(), "the demo uploaded four documents under " + report.folder());
    int billed = 0;
    for (Blob blob : uploads) {
      String key = "gcs:" + blob.getBucket() + "/" + blob.getName() + "#" + blob.getGeneration();
      List<QueryDocumentSnapshot> analyses = byKey(RecordWrites.ANALYSES, key);
      List<QueryDocumentSnapshot> bills = byKey(RecordWrites.BILLING, key);
      assertEquals(1, analyses.size(), "one analysis for " + key);
      String status = analyses.get(0).getString("status");
      assertTrue(FINAL.contains(status), key + " ended " + status);
      assertTrue(bills.size() <= 1, key + " billed " + bills.size() + " times");
      assertEquals(status.equals("analysed") ? 1 : 0, bills.size(), key + " is " + status + ": billed iff analysed");
      if (!bills.isEmpty()) {
        assertEquals(batch, bills.get(0).getBoolean("batch"), "batch pricing in batch mode only");
        billed++;
      }
    }
    assertEquals(2, billed, "the PDF and the PNG are analysed and billed; the text file and the empty PDF are refused");
  }

  private List<QueryDocumentSnapshot> byKey(String collection, String key) throws Exception {
    return db.collection(collection).whereEqualTo("key", key).get().get(Bounds.CALL.toSeconds(), TimeUnit.SECONDS)
        .getDocuments();
  }

  @Test
  @Order(1)
  void syncDemo_absorbsEveryDuplicate_andFirestoreAgrees() throws Exception {
    syncReport = demo();
    eachUploadAnalysedOnce_andBilledAtMostOnce(syncReport, false);
    assertEquals(List.of(Effects.ANALYSE, Effects.PUBLISH, Effects.NOTIFY),
        syncReport.rows().stream().map(DemoReport.Row::effect).toList());
    assertTrue(syncReport.rows().get(0).absorbed() >= 5, "four doubled notifications and one redelivery absorbed");
  }

  @Test
  @Order(2)
  void batchDemo_afterTheFunctionsRestartInBatchMode_absorbsEveryDuplicate_andFirestoreAgrees() throws Exception {
    stack.restartFunctions(Map.of("ANALYSIS_MODE", Mode.BATCH.value()));
    config = config.withMode(Mode.BATCH);
    DemoReport report = demo();
    eachUploadAnalysedOnce_andBilledAtMostOnce(report, true);
    assertEquals(List.of(Effects.ANALYSE, Effects.COMPLETE, Effects.PUBLISH, Effects.NOTIFY),
        report.rows().stream().map(DemoReport.Row::effect).toList());
    DemoReport.Row complete = report.rows().get(1);
    assertEquals(1, complete.performed(), "the two accepted documents share one batch job, completed once");
    assertTrue(complete.absorbed() >= 2, "the job's second webhook and the reconciler's visit absorbed");
  }

  @Test
  @Order(3)
  void stopping_leavesNoProcessBehind() {
    List<Long> pids = stack.processes().stream().map(ChildProcess::pid).toList();
    // The stand-ins, the relay and the notification endpoint run in this JVM; the rest are processes.
    assertTrue(pids.size() >= 2 + 2 * Part.functions().size(),
        "the two emulators, the five functions and their batch-mode successors: " + pids);
    stack.close();
    Await.until(Bounds.CALL, () -> pids.stream().noneMatch(DemoEndToEndTest::alive),
        "every process of the stack to have exited");
  }

  private static boolean alive(long pid) {
    return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
  }
}
