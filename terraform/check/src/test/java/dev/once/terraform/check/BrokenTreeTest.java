package dev.once.terraform.check;

import static dev.once.terraform.check.Trees.assertOneFinding;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.config.Setting;
import dev.once.terraform.check.Trees.Copy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Each check catches a broken copy of terraform/ (or of the code) and says where and what to fix. The copies are
 * declared next to their tests and parsed together (see {@link Trees}).
 */
class BrokenTreeTest {
  private static final ClassLoader FUNCTIONS = Thread.currentThread().getContextClassLoader();

  // --- parsing and references ---

  private static final Copy UNCLOSED_BLOCK =
      Copy.replacing("scheduler.tf", "retry_count = 0\n  }", "retry_count = 0\n");

  @Test
  void aSyntaxError_isReportedWithItsFile() {
    Finding finding = assertOneFinding(new ReferenceCheck().findings(UNCLOSED_BLOCK.config()), "scheduler.tf",
        "does not parse as HCL");
    assertEquals("(whole file)", finding.address());
  }

  private static final Copy MISSPELLED_RESOURCE = Copy.replacing("scheduler.tf",
      "google_service_account.scheduler.email", "google_service_account.schedular.email");

  @Test
  void aMisspelledResource_isReportedWhereItIsUsed() {
    assertOneFinding(new ReferenceCheck().findings(MISSPELLED_RESOURCE.config()), "scheduler.tf",
        "google_cloud_scheduler_job.reconcile", "refers to google_service_account.schedular, which is not declared");
  }

  private static final Copy MISSPELLED_VARIABLE = Copy.replacing("functions.tf",
      "GEMINI_MODEL         = var.gemini_model", "GEMINI_MODEL         = var.gemini_modle");

  @Test
  void anUndeclaredVariable_isReported() {
    assertOneFinding(new ReferenceCheck().findings(MISSPELLED_VARIABLE.config()), "functions.tf",
        "google_cloudfunctions2_function.document_uploaded", "var.gemini_modle", "declare variable \"gemini_modle\"");
  }

  private static final Copy UNKNOWN_KEY = Copy.replacing("secrets.tf",
      "google_service_account.function[\"gemini_webhook\"].member",
      "google_service_account.function[\"gemini_web_hook\"].member");

  @Test
  void anUnknownForEachKey_isReported() {
    assertOneFinding(new ReferenceCheck().findings(UNKNOWN_KEY.config()), "secrets.tf",
        "google_secret_manager_secret_iam_member.gemini_webhook_secret", "[\"gemini_web_hook\"]", "gemini_webhook");
  }

  private static final Copy UNUSED_VARIABLE = Copy.adding("extra.tf",
      "variable \"forgotten\" {\n  type    = string\n  default = \"x\"\n}\n");

  @Test
  void anUnusedVariable_isReported() {
    assertOneFinding(new ReferenceCheck().findings(UNUSED_VARIABLE.config()), "extra.tf", "var.forgotten",
        "never used");
  }

  private static final Copy UNUSED_DATA = Copy.adding("extra.tf", "data \"google_client_config\" \"this\" {}\n");

  @Test
  void anUnusedDataSource_isReported() {
    assertOneFinding(new ReferenceCheck().findings(UNUSED_DATA.config()), "extra.tf", "data.google_client_config.this",
        "never used");
  }

  private static final Copy DUPLICATE_TOPIC = Copy.adding("extra.tf",
      "resource \"google_pubsub_topic\" \"results\" {\n  name = \"again\"\n}\n");

  @Test
  void aDuplicateDeclaration_isReported() {
    // Files are read in name order, so the second declaration is the one in pubsub.tf.
    assertOneFinding(new ReferenceCheck().findings(DUPLICATE_TOPIC.config()), "pubsub.tf",
        "google_pubsub_topic.results", "declared twice (also in extra.tf)");
  }

  // --- entry points ---

  private static final Copy MISSING_CLASS = Copy.replacing("functions.tf",
      "\"dev.once.functions.GeminiWebhook\"", "\"dev.once.functions.GeminiWebHook\"");

  @Test
  void anEntryPointWithoutAClass_isReported() {
    assertOneFinding(new EntryPointCheck(FUNCTIONS).findings(MISSING_CLASS.config()), "functions.tf",
        "google_cloudfunctions2_function.gemini_webhook", "dev.once.functions.GeminiWebHook names no class");
  }

  private static final Copy HTTP_FUNCTION_ON_EVENTS = Copy.replacing("functions.tf",
      "\"dev.once.functions.DocumentUploaded\"", "\"dev.once.functions.GeminiReconciler\"");

  @Test
  void anHttpFunctionBehindAnEventTrigger_isReported() {
    List<Finding> findings = new EntryPointCheck(FUNCTIONS).findings(HTTP_FUNCTION_ON_EVENTS.config());
    assertEquals(2, findings.size(), findings::toString); // and GeminiReconciler is now deployed twice
    assertTrue(findings.get(0).toString().startsWith("functions.tf: google_cloudfunctions2_function.document_uploaded:"
        + " dev.once.functions.GeminiReconciler implements HttpFunction, but the function has an event_trigger"
        + " (CloudEvents), which needs CloudEventsFunction."), findings::toString);
    assertTrue(findings.get(1).toString().contains("deploys dev.once.functions.GeminiReconciler a second time"),
        findings::toString);
  }

  private static final Copy EVENT_FUNCTION_ON_HTTP = Copy.replacing("functions.tf",
      "\"dev.once.functions.GeminiWebhook\"", "\"dev.once.functions.MessageDelivered\"");

  @Test
  void aCloudEventFunctionWithoutATrigger_isReported() {
    List<Finding> findings = new EntryPointCheck(FUNCTIONS).findings(EVENT_FUNCTION_ON_HTTP.config());
    assertEquals(2, findings.size(), findings::toString);
    assertTrue(findings.stream().anyMatch(f -> f.toString().contains("implements CloudEventsFunction")
        && f.toString().contains("needs HttpFunction")), findings::toString);
  }

  private static final Copy NO_RETRY = Copy.replacing("functions.tf",
      "\"RETRY_POLICY_RETRY\"", "\"RETRY_POLICY_DO_NOT_RETRY\"");

  @Test
  void anEventTriggerThatDoesNotRetry_isReported() {
    assertOneFinding(new EntryPointCheck(FUNCTIONS).findings(NO_RETRY.config()), "functions.tf",
        "google_cloudfunctions2_function.document_uploaded", "RETRY_POLICY_DO_NOT_RETRY",
        "retry_policy = \"RETRY_POLICY_RETRY\"");
  }

  // --- environment ---

  private static final Copy NOTIFY_URL_UNSET = Copy.replacing("functions.tf",
      "      NOTIFY_URL           = var.notify_url\n", "");

  @Test
  void aSettingNoFunctionSets_isReported() {
    assertOneFinding(EnvironmentCheck.forCode().findings(NOTIFY_URL_UNSET.config()), "functions.tf",
        "NOTIFY_URL is read by the code", "no function sets it", "EnvironmentCheck.LOCAL_ONLY");
  }

  /** Every setting the code reads, with its description. */
  private static Map<String, String> codeSettings() {
    Map<String, String> settings = new LinkedHashMap<>();
    for (Setting s : CodeSettings.all()) {
      settings.put(s.name(), s.description());
    }
    return settings;
  }

  @Test
  void aSettingAddedToTheCode_failsUntilTerraformSetsIt() {
    Map<String, String> settings = codeSettings();
    settings.put("ONCE_PRICE_TABLE", "price per 1k tokens by model");
    List<Finding> findings = new EnvironmentCheck(settings, Map.of(), EnvironmentCheck.LOCAL_ONLY, Map.of(),
        EnvironmentCheck.PENDING_IN_CODE).findings(Trees.real());
    assertOneFinding(findings, "functions.tf", "ONCE_PRICE_TABLE is read by the code", "no function sets it");
  }

  @Test
  void aPendingSettingTheCodeReadsNow_mustLeaveTheList() {
    List<Finding> findings = new EnvironmentCheck(codeSettings(), Map.of(), EnvironmentCheck.LOCAL_ONLY, Map.of(),
        Map.of("GEMINI_DAILY_BUDGET_USD", "pending")).findings(Trees.real());
    assertOneFinding(findings, "EnvironmentCheck.java",
        "PENDING_IN_CODE: GEMINI_DAILY_BUDGET_USD is read by the code now",
        "delete it from EnvironmentCheck.PENDING_IN_CODE");
  }

  @Test
  void aPendingSettingIsStillOnlyAllowedWhereListed() {
    // As before the code read the budget's settings: only one of them pending.
    Map<String, String> settings = codeSettings();
    settings.remove("GEMINI_DAILY_BUDGET_USD");
    settings.remove("ONCE_BUDGET_TIMEZONE");
    List<Finding> findings = new EnvironmentCheck(settings, Map.of(),
        EnvironmentCheck.LOCAL_ONLY, Map.of(), Map.of("GEMINI_DAILY_BUDGET_USD", "pending")).findings(Trees.real());
    assertEquals(2, findings.size(), findings::toString); // ONCE_BUDGET_TIMEZONE, set on two functions
    assertTrue(
        findings.stream().allMatch(f -> f.toString().contains("sets ONCE_BUDGET_TIMEZONE, which the code never reads")),
        findings::toString);
  }

  private static final Copy UNREAD_VARIABLE = Copy.replacing("functions.tf",
      "DEAD_LETTER_TOPIC    = google_pubsub_topic.dead_letter.id",
      "DEAD_LETTER_TOPIC    = google_pubsub_topic.dead_letter.id\n      DEADLETTER_TOPIC     = \"x\"");

  @Test
  void aVariableTheCodeNeverReads_isReported() {
    assertOneFinding(EnvironmentCheck.forCode().findings(UNREAD_VARIABLE.config()), "functions.tf",
        "google_cloudfunctions2_function.message_delivered", "sets DEADLETTER_TOPIC, which the code never reads");
  }

  private static final Copy LOCAL_ONLY_DEPLOYED = Copy.replacing("functions.tf",
      "NOTIFY_URL           = var.notify_url",
      "NOTIFY_URL           = var.notify_url\n      GEMINI_BASE_URL      = \"http://127.0.0.1:9090\"");

  @Test
  void aLocalOnlySettingWhenDeployed_isReported() {
    assertOneFinding(EnvironmentCheck.forCode().findings(LOCAL_ONLY_DEPLOYED.config()), "functions.tf",
        "google_cloudfunctions2_function.message_delivered", "sets GEMINI_BASE_URL, which is for local runs only");
  }

  private static final Copy PLAIN_SECRET = Copy.replacing("functions.tf",
      "NOTIFY_URL           = var.notify_url",
      "NOTIFY_URL           = var.notify_url\n      GEMINI_API_KEY       = \"AIza-not-a-real-key\"");

  @Test
  void aSecretAsAPlainVariable_isReported() {
    assertOneFinding(EnvironmentCheck.forCode().findings(PLAIN_SECRET.config()), "functions.tf",
        "google_cloudfunctions2_function.message_delivered",
        "sets the secret GEMINI_API_KEY as a plain environment variable");
  }

  private static final Copy SECRET_VERSION = Copy.adding("extra.tf", """
      resource "google_secret_manager_secret_version" "key" {
        secret      = google_secret_manager_secret.gemini_api_key.id
        secret_data = "AIza-not-a-real-key"
      }
      """);

  @Test
  void aSecretVersionInTerraform_isReported() {
    assertOneFinding(EnvironmentCheck.forCode().findings(SECRET_VERSION.config()), "extra.tf",
        "google_secret_manager_secret_version.key", "stored in the state", "gcloud secrets versions add");
  }

  @Test
  void aStaleAllowList_isReported() {
    Map<String, String> settings = new LinkedHashMap<>();
    for (Setting s : CodeSettings.all()) {
      if (!s.name().equals("GEMINI_BASE_URL")) {
        settings.put(s.name(), s.description());
      }
    }
    List<Finding> findings = new EnvironmentCheck(settings, Map.of(), EnvironmentCheck.LOCAL_ONLY,
        Map.of("GEMINI_MODEL", "the code's model is right everywhere"), EnvironmentCheck.PENDING_IN_CODE)
        .findings(Trees.real());
    assertEquals(2, findings.size(), findings::toString);
    assertTrue(
        findings.get(0).toString().contains("LOCAL_ONLY: GEMINI_BASE_URL is listed but the code no longer reads it"),
        findings::toString);
    assertTrue(findings.get(1).toString().contains("GEMINI_MODEL has no default in the code"), findings::toString);
  }

  @Test
  void aGetenvAroundTheRegistry_isReported() {
    Set<String> settings = CodeSettings.all().stream().map(Setting::name).collect(Collectors.toSet());
    GetenvScan scan = new GetenvScan(Path.of("."), List.of(), settings);
    List<Finding> findings = new ArrayList<>();
    scan.scan("Sneaky.java", """
        class Sneaky {
          // System.getenv("IN_A_COMMENT") is not a call
          String ok = System.getenv("NOTIFY_URL");
          String url = "http://example.com"; String price = System.getenv("PRICE_TABLE");
          String viaMap = System.getenv().get("SIZE_LIMIT");
          String computed = System.getenv(name);
        }
        """, findings);
    assertEquals(3, findings.size(), findings::toString);
    assertEquals("Sneaky.java: line 4: reads PRICE_TABLE, which no Setting enum lists, so Terraform's"
        + " environment is never checked against it. Fix: add PRICE_TABLE to PipelineSetting and read it through Settings.",
        findings.get(0).toString());
    assertTrue(findings.get(1).toString().contains("line 5: reads SIZE_LIMIT"), findings::toString);
    assertTrue(findings.get(2).toString().contains("line 6: reads the environment with a name the check cannot see"),
        findings::toString);
  }

  @Test
  void aMissingSourceRoot_isReported() {
    List<Finding> findings = new GetenvScan(Trees.ROOT, List.of("gone/src/main/java"), Set.of()).findings();
    assertOneFinding(findings, "gone/src/main/java", "does not exist", "GetenvScan.DEPLOYED_SOURCES");
  }

  // --- ledger ---

  private static final Copy TTL_ON_OTHER_FIELD = Copy.replacing("firestore.tf",
      "field      = \"expireAt\"", "field      = \"expiresAt\"");

  @Test
  void aTtlOnAnotherField_isReported() {
    List<Finding> findings = LedgerCheck.forCode().findings(TTL_ON_OTHER_FIELD.config());
    assertEquals(2, findings.size(), findings::toString);
    assertTrue(findings.get(0).toString().startsWith(
        "firestore.tf: google_firestore_field.ledger_expire_at: puts a TTL policy on idempotency.expiresAt"),
        findings::toString);
    assertTrue(findings.get(1).toString().contains("no TTL policy on idempotency.expireAt"), findings::toString);
  }

  private static final Copy MARKER_TTL_ON_OTHER_FIELD = Copy.replacing("firestore.tf",
      "collection = \"budget\"\n  field      = \"expireAt\"", "collection = \"budget\"\n  field      = \"expiresAt\"");

  @Test
  void aMarkerTtlOnAnotherField_isReported() {
    List<Finding> findings = LedgerCheck.forCode().findings(MARKER_TTL_ON_OTHER_FIELD.config());
    assertEquals(2, findings.size(), findings::toString);
    assertTrue(findings.get(0).toString().startsWith(
        "firestore.tf: google_firestore_field.budget_expire_at: puts a TTL policy on budget.expiresAt"),
        findings::toString);
    assertTrue(findings.get(1).toString().contains("no TTL policy on budget.expireAt: the spending guard's markers"),
        findings::toString);
  }

  private static final Copy OTHER_COLLECTION = Copy.replacing("main.tf",
      "ledger_collection = \"idempotency\"", "ledger_collection = \"ledger\"");

  @Test
  void aLedgerCollectionOtherThanTheCodes_isReported() {
    List<Finding> findings = LedgerCheck.forCode().findings(OTHER_COLLECTION.config());
    // The TTL policy moved with the local, and so did ONCE_COLLECTION of all five functions.
    assertEquals(7, findings.size(), findings::toString);
    assertTrue(findings.get(0).toString().contains(
        "puts a TTL policy on ledger.expireAt, but the ledger writes its expiry to idempotency.expireAt"),
        findings::toString);
    assertTrue(findings.get(2).toString().contains("sets ONCE_COLLECTION to ledger"), findings::toString);
  }

  private static final Copy NAMED_DATABASE = Copy.replacing("firestore.tf",
      "name        = \"(default)\"", "name        = \"once\"");

  @Test
  void aDatabaseTheCodeDoesNotOpen_isReported() {
    List<Finding> findings = LedgerCheck.forCode().findings(NAMED_DATABASE.config());
    // The field overrides follow the database's name, so they are reported too.
    assertTrue(findings.stream().anyMatch(f -> f.toString().equals("firestore.tf: google_firestore_database.default:"
        + " creates database once, but the code opens the (default) database (FirestoreClients names none)."
        + " Fix: set name = \"(default)\".")), findings::toString);
  }

  // --- runtime ---

  private static final Copy OLD_RUNTIME = Copy.replacing("functions.tf",
      "runtime           = \"java21\"", "runtime           = \"java17\"");

  @Test
  void aRuntimeOtherThanTheRelease_isReported() {
    assertOneFinding(RuntimeCheck.fromParentPom(Trees.ROOT.resolve("pom.xml")).findings(OLD_RUNTIME.config()),
        "functions.tf", "google_cloudfunctions2_function.document_uploaded", "runs java17", "--release 21",
        "runtime = \"java21\"");
  }

  @Test
  void aReleaseBump_failsUntilTheRuntimeFollows() {
    List<Finding> findings = new RuntimeCheck("25").findings(Trees.real());
    assertEquals(5, findings.size(), findings::toString);
    assertTrue(findings.get(0).toString().contains("runs java21, but the code is compiled with --release 25"),
        findings::toString);
  }

  // --- public access ---

  private static final Copy PUBLIC_RECONCILER = Copy.replacing("iam.tf",
      "member   = google_service_account.scheduler.member", "member   = \"allUsers\"");

  @Test
  void anotherPublicFunction_isReported() {
    assertOneFinding(new PublicInvokerCheck(PublicInvokerCheck.WEBHOOK).findings(PUBLIC_RECONCILER.config()), "iam.tf",
        "google_cloud_run_service_iam_member.scheduler_invokes_reconciler",
        "makes dev.once.functions.GeminiReconciler callable by anyone");
  }

  private static final Copy PRIVATE_WEBHOOK = Copy.replacing("iam.tf",
      "member   = \"allUsers\"", "member   = google_service_account.scheduler.member");

  @Test
  void aPrivateWebhook_isReported() {
    assertOneFinding(new PublicInvokerCheck(PublicInvokerCheck.WEBHOOK).findings(PRIVATE_WEBHOOK.config()),
        "functions.tf", "google_cloudfunctions2_function.gemini_webhook", "is not public");
  }

  private static final Copy PUBLIC_PROJECT = Copy.adding("extra.tf", """
      resource "google_project_iam_member" "everyone" {
        project = var.project_id
        role    = "roles/run.invoker"
        member  = "allUsers"
      }
      """);

  @Test
  void aPublicProjectGrant_isReported() {
    assertOneFinding(new PublicInvokerCheck(PublicInvokerCheck.WEBHOOK).findings(PUBLIC_PROJECT.config()), "extra.tf",
        "google_project_iam_member.everyone", "on the whole project");
  }
}
