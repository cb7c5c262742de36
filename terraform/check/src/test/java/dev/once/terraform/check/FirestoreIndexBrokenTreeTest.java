package dev.once.terraform.check;

import static dev.once.terraform.check.Trees.assertClean;
import static dev.once.terraform.check.Trees.assertOneFinding;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.terraform.check.Trees.Copy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Firestore index check catches a broken copy of terraform/ (an exemption or index that disagrees with the
 * queries of the code) and code that queries what Terraform does not index (sources written to a temporary tree).
 */
class FirestoreIndexBrokenTreeTest {
  private static final FirestoreIndexCheck CODE = FirestoreIndexCheck.forCode(Trees.ROOT);

  private static final Copy QUERIED_FIELD_EXEMPTED = Copy.replacing("firestore.tf",
      "    \"reason\",\n    \"invoice\",", "    \"reason\",\n    \"status\",\n    \"invoice\",");

  /**
   * Reported at each query that needs it: the pending submissions, batch mode's queue, the reconciler's look at gathered
   * documents and `once stats` all query status.
   */
  @Test
  void aQueriedFieldExempted_isReported() {
    List<Finding> findings = CODE.findings(QUERIED_FIELD_EXEMPTED.config());
    assertEquals(3, findings.size(), findings::toString);
    for (Finding finding : findings) {
      assertEquals("firestore.tf", finding.file(), finding::toString);
      for (String fragment : List.of("google_firestore_field.analyses_unindexed[\"status\"]",
          "exempts analyses.status from indexing", ".java:", "needs the single-field index on status")) {
        assertTrue(finding.toString().contains(fragment), () -> fragment + " missing from " + finding);
      }
    }
  }

  private static final Copy MONOTONIC_FIELD_INDEXED = Copy.replacing("firestore.tf",
      "    \"leaseExpiresAt\",\n", "");

  @Test
  void anUnqueriedLedgerFieldNotExempted_isReported() {
    // Written where a claim is created (the record layout) and where the rules renew and release it.
    List<Finding> findings = CODE.findings(MONOTONIC_FIELD_INDEXED.config());
    assertEquals(List.of("core/src/main/java/dev/once/internal/ledger/LedgerStateMachine.java",
        "core/src/main/java/dev/once/internal/ledger/RecordLayout.java"),
        findings.stream().map(Finding::file).sorted().toList(), findings::toString);
    for (Finding finding : findings) {
      for (String fragment : List.of("idempotency.leaseExpiresAt", "no query needs it, but it is not exempted",
          "500 writes per second", "google_firestore_field.ledger_unindexed")) {
        assertTrue(finding.toString().contains(fragment), () -> "\"" + fragment + "\" missing from: " + finding);
      }
    }
  }

  private static final Copy STALE_EXEMPTION = Copy.replacing("firestore.tf",
      "    \"billedAt\",\n", "    \"billedAt\",\n    \"billedOn\",\n");

  @Test
  void anExemptionOfAFieldNeverWritten_isReported() {
    assertOneFinding(CODE.findings(STALE_EXEMPTION.config()), "firestore.tf",
        "google_firestore_field.billing_unindexed[\"billedOn\"]", "which the code never writes");
  }

  private static final Copy UNNEEDED_COMPOSITE = Copy.adding("extra.tf", """
      resource "google_firestore_index" "by_status_and_model" {
        project    = var.project_id
        collection = "analyses"
        fields {
          field_path = "status"
          order      = "ASCENDING"
        }
        fields {
          field_path = "model"
          order      = "ASCENDING"
        }
      }
      """);

  @Test
  void aCompositeIndexNoQueryNeeds_isReported() {
    assertOneFinding(CODE.findings(UNNEEDED_COMPOSITE.config()), "extra.tf",
        "google_firestore_index.by_status_and_model",
        "indexes analyses (status ASCENDING, model ASCENDING), which no query");
  }

  private static final Copy SAME_COMPOSITE_TWICE = Copy.adding("extra.tf", """
      resource "google_firestore_index" "deferred_again" {
        project    = var.project_id
        collection = "analyses"
        fields {
          field_path = "status"
          order      = "ASCENDING"
        }
        fields {
          field_path = "deferredAt"
          order      = "ASCENDING"
        }
      }
      """);

  /** A second declaration of an index (query_scope left to its default) fails the first apply with 409. */
  @Test
  void theSameCompositeIndexDeclaredTwice_isReported() {
    assertOneFinding(CODE.findings(SAME_COMPOSITE_TWICE.config()), "firestore.tf",
        "google_firestore_index.analyses_status_deferred",
        "declares the same index as google_firestore_index.deferred_again");
  }

  private static final Copy SUM_INDEX_REMOVED = Copy.replacing("firestore.tf",
      "resource \"google_firestore_index\" \"budget_day_sums\"", "resource \"google_firestore_index_off\" \"x\"");

  /** The spending guard's sum (ledger.sum over the day's counters) is a query the check reads, needing its index. */
  @Test
  void theBudgetsSumWithoutItsIndex_isReportedAtTheCallThatSums() {
    assertOneFinding(CODE.findings(SUM_INDEX_REMOVED.config()), "firestore.tf",
        "core/src/main/java/dev/once/budget/SpendCounters.java",
        "needs a composite index (day ASCENDING, spentMicroUsd ASCENDING, reservedMicroUsd ASCENDING)");
  }

  /** The code tree with one more class in a module of its own. */
  private static FirestoreIndexCheck withClass(Path root, String module, String source) throws IOException {
    Path file = root.resolve(module + "/src/main/java/dev/once/extra/Stuck.java");
    Files.createDirectories(file.getParent());
    Files.writeString(file, source);
    JavaSources java = JavaSources.parse(Trees.ROOT, List.of("core/src/main/java", "firestore/src/main/java",
        "functions/src/main/java", "run/src/main/java", "cli/src/main/java"));
    JavaSources extra = JavaSources.parse(root, List.of(module + "/src/main/java"));
    JavaSources both = JavaSources.merge(java, extra);
    return new FirestoreIndexCheck(new FirestoreUse(both, "idempotency"), both.problems());
  }

  private static final String STUCK = """
      package dev.once.extra;

      import com.google.cloud.Timestamp;
      import com.google.cloud.firestore.Firestore;
      import com.google.cloud.firestore.Query;
      import dev.once.ledger.LedgerOptions;

      public final class Stuck {
        private static final String STATE = "state";
        private final Query expired;

        Stuck(Firestore db, LedgerOptions config) {
          var ledger = db.collection(config.collection());
          this.expired = ledger.whereEqualTo(STATE, "CLAIMED").whereLessThan("leaseExpiresAt", Timestamp.now());
        }
      }
      """;

  private static final Copy STUCK_INDEX = Copy.adding("extra.tf", """
      resource "google_firestore_index" "stuck" {
        project    = var.project_id
        collection = local.ledger_collection
        fields {
          field_path = "state"
          order      = "ASCENDING"
        }
        fields {
          field_path = "leaseExpiresAt"
          order      = "ASCENDING"
        }
      }
      """);

  @Test
  void aCompositeQueryWithoutItsIndex_isReported_andTheIndexSatisfiesIt(@TempDir Path root) throws IOException {
    FirestoreIndexCheck check = withClass(root, "extra", STUCK);
    assertOneFinding(check.findings(Trees.real()), "firestore.tf",
        "extra/src/main/java/dev/once/extra/Stuck.java:14 queries"
            + " idempotency where state ==, leaseExpiresAt <>",
        "needs a composite index (state ASCENDING, leaseExpiresAt ASCENDING)");
    // its fields keep their exemptions: the composite index serves the query on its own
    assertClean(check.findings(STUCK_INDEX.config()));
  }

  @Test
  void aCollectionTheCheckCannotName_isReported(@TempDir Path root) throws IOException {
    FirestoreIndexCheck check = withClass(root, "extra", """
        package dev.once.extra;

        class Stuck {
          Object q(com.google.cloud.firestore.Firestore db, String prefix) {
            return db.collection(prefix + "analyses").whereEqualTo("status", "deferred");
          }
        }
        """);
    List<Finding> findings = check.findings(Trees.real());
    assertEquals(2, findings.size(), findings::toString); // the collection() call and the query on it
    assertTrue(
        findings.get(0).toString().startsWith("extra/src/main/java/dev/once/extra/Stuck.java: line 5: opens a Firestore"
            + " collection the check cannot name"),
        findings::toString);
  }

  @Test
  void aNewModule_isReadWithoutChangingTheCheck_andAStaleExclusionIsReported(@TempDir Path root) throws IOException {
    Files.writeString(root.resolve("pom.xml"), "<project><modules><module>local</module><module>cli</module>"
        + "<!-- <module>old</module> --></modules></project>");
    Files.createDirectories(root.resolve("local/src/main/java"));
    Path file = root.resolve("cli/src/main/java/Stuck.java");
    Files.createDirectories(file.getParent());
    Files.writeString(file,
        "class Stuck { Object q(Object db) { return db.collection(\"analyses\").whereEqualTo(\"status\", 1); } }");
    JavaSources java = JavaSources.of(root);
    assertEquals(List.of("cli/src/main/java/Stuck.java"),
        java.sources().stream().map(JavaSources.Source::path).toList());
    assertEquals(4, java.problems().size(), java.problems()::toString); // bench, terraform/check, testing, wire: not here
    assertTrue(
        java.problems().stream().allMatch(p -> p.problem().contains("is listed but pom.xml has no such module")));
  }
}
