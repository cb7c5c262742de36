package dev.once.terraform.check;

import static dev.once.terraform.check.Trees.assertClean;
import static dev.once.terraform.check.Trees.assertOneFinding;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.terraform.check.Trees.Copy;
import java.io.IOException;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The 7.x schema check finds each kind of fault planted in a copy of terraform/: an unknown type, an unknown
 * argument or nested block (under Pulumi's names, a misspelt plural or singular would pass), an output-only one
 * set, a required one missing; and the committed schema is the one the pinned package gives.
 */
class SchemaBrokenTreeTest {
  private static final SchemaCheck CHECK = SchemaCheck.google7();

  // --- types ---

  // Removed in provider 7.0 (upgrade guide: "google_tpu_node is now removed").
  private static final Copy REMOVED_TYPE = Copy.adding("extra.tf",
      "resource \"google_tpu_node\" \"old\" {\n  name = \"old\"\n  zone = \"us-central1-b\"\n}\n");

  @Test
  void aTypeTheProviderDoesNotHave_isReported() {
    assertOneFinding(CHECK.findings(REMOVED_TYPE.config()), "extra.tf", "google_tpu_node.old",
        "is not a resource type of hashicorp/terraform-provider-google-beta v7.", "generate.js");
  }

  private static final Copy UNDECLARED_PROVIDER = Copy.adding("extra.tf",
      "resource \"gogle_storage_bucket\" \"typo\" {\n  name = \"typo\"\n}\n");

  @Test
  void aTypeOfAnUndeclaredProvider_isReported() {
    assertOneFinding(CHECK.findings(UNDECLARED_PROVIDER.config()), "extra.tf", "gogle_storage_bucket.typo",
        "provider \"gogle\"", "required_providers does not declare");
  }

  // --- unknown arguments and blocks ---

  private static final Copy UNKNOWN_ARGUMENT = Copy.replacing("functions.tf",
      "retry_policy          = \"RETRY_POLICY_RETRY\" # a failed or in-flight",
      "retry_policies        = \"RETRY_POLICY_RETRY\" # a failed or in-flight");

  @Test
  void anUnknownArgumentOfANestedBlock_isReported() {
    assertOneFinding(CHECK.findings(UNKNOWN_ARGUMENT.config()), "functions.tf",
        "google_cloudfunctions2_function.document_uploaded", "sets event_trigger.retry_policies",
        "does not have in hashicorp/terraform-provider-google-beta v7.45.0");
  }

  // Pulumi calls the block lifecycleRules: Terraform's name is singular.
  private static final Copy PLURAL_BLOCK = Copy.replacing("storage.tf", "lifecycle_rule {", "lifecycle_rules {");

  @Test
  void aListBlockUnderPulumisPluralName_isReported() {
    assertOneFinding(CHECK.findings(PLURAL_BLOCK.config()), "storage.tf", "google_storage_bucket.inbox",
        "sets lifecycle_rules,");
  }

  private static final Copy SINGULAR_BLOCK = Copy.replacing("functions.tf", "event_filters {", "event_filter {");

  @Test
  void aListBlockWhoseNameIsPlural_isReportedSingular() {
    assertOneFinding(CHECK.findings(SINGULAR_BLOCK.config()), "functions.tf",
        "google_cloudfunctions2_function.document_uploaded", "sets event_trigger.event_filter,");
  }

  private static final Copy UNKNOWN_DATA_ARGUMENT = Copy.replacing("agents.tf",
      "data \"google_storage_project_service_account\" \"gcs\" {\n  project = var.project_id",
      "data \"google_storage_project_service_account\" \"gcs\" {\n  project = var.project_id\n  user_project_id = var.project_id");

  @Test
  void anUnknownArgumentOfADataSource_isReported() {
    assertOneFinding(CHECK.findings(UNKNOWN_DATA_ARGUMENT.config()), "agents.tf",
        "data.google_storage_project_service_account.gcs", "sets user_project_id,");
  }

  // In a dynamic block's content: the misspelt argument is unknown and the one it replaces is missing.
  private static final Copy DYNAMIC_CONTENT = Copy.replacing("observability.tf",
      "threshold_percent = threshold_rules.value", "threshold_percentage = threshold_rules.value");

  @Test
  void aDynamicBlocksContent_isCheckedAsTheBlock() {
    List<String> found = CHECK.findings(DYNAMIC_CONTENT.config()).stream().map(Finding::toString).toList();
    assertEquals(2, found.size(), () -> String.join("\n", found));
    assertTrue(found.get(0).contains("google_billing_budget.project: sets threshold_rules.threshold_percentage,"),
        found::toString);
    assertTrue(found.get(1).contains("google_billing_budget.project: lacks threshold_rules.threshold_percent,"),
        found::toString);
  }

  // --- output-only ---

  // Upgrade guide 7.0: service_config.service "is now an output only field".
  private static final Copy NESTED_OUTPUT_ONLY = Copy.replacing("functions.tf",
      "service_account_email = google_service_account.function[\"message_delivered\"].email",
      "service_account_email = google_service_account.function[\"message_delivered\"].email\n    service = \"mine\"");

  @Test
  void anOutputOnlyArgumentOfANestedBlock_isReported() {
    assertOneFinding(CHECK.findings(NESTED_OUTPUT_ONLY.config()), "functions.tf",
        "google_cloudfunctions2_function.message_delivered", "sets service_config.service,", "(output-only)");
  }

  // Pulumi names it pulumiLabels.
  private static final Copy OUTPUT_ONLY = Copy.replacing("pubsub.tf",
      "topic   = google_pubsub_topic.dead_letter.id\n  labels  = local.labels",
      "topic   = google_pubsub_topic.dead_letter.id\n  labels  = local.labels\n  terraform_labels = local.labels");

  @Test
  void anOutputOnlyArgument_isReported() {
    assertOneFinding(CHECK.findings(OUTPUT_ONLY.config()), "pubsub.tf",
        "google_pubsub_subscription.dead_letter_hold", "sets terraform_labels,", "(output-only)");
  }

  private static final Copy ID = Copy.replacing("pubsub.tf",
      "name    = \"${var.name_prefix}-results\"", "id      = \"results\"\n  name    = \"${var.name_prefix}-results\"");

  @Test
  void anId_isReported() {
    assertOneFinding(CHECK.findings(ID.config()), "pubsub.tf", "google_pubsub_topic.results",
        "sets id, which Terraform computes");
  }

  // --- required ---

  // Upgrade guide 7.0: event_trigger.event_type "is now required". The first one is MessageDelivered's.
  private static final Copy NO_EVENT_TYPE = Copy.replacing("functions.tf",
      "event_type            = \"google.cloud.pubsub.topic.v1.messagePublished\"\n    pubsub_topic",
      "pubsub_topic");

  @Test
  void aMissingRequiredArgumentOfANestedBlock_isReported() {
    assertOneFinding(CHECK.findings(NO_EVENT_TYPE.config()), "functions.tf",
        "google_cloudfunctions2_function.message_delivered", "lacks event_trigger.event_type,", "requires");
  }

  private static final Copy NO_SECRET_VERSION = Copy.replacing("functions.tf",
      "      version    = var.gemini_api_key_version\n", "");

  @Test
  void aMissingRequiredArgumentOfARepeatedBlock_isReported() {
    assertOneFinding(CHECK.findings(NO_SECRET_VERSION.config()), "functions.tf",
        "google_cloudfunctions2_function.document_uploaded",
        "lacks service_config.secret_environment_variables.version,");
  }

  private static final Copy NO_LOCATION = Copy.replacing("storage.tf",
      "  location = var.region # an Eventarc storage trigger must be in its bucket's region\n", "");

  @Test
  void aMissingRequiredArgument_isReported() {
    assertOneFinding(CHECK.findings(NO_LOCATION.config()), "storage.tf", "google_storage_bucket.inbox",
        "lacks location,");
  }

  // --- what is not a fault ---

  private static final Copy TIMEOUTS = Copy.replacing("pubsub.tf",
      "name    = \"${var.name_prefix}-results\"",
      "name    = \"${var.name_prefix}-results\"\n  timeouts {\n    create = \"10m\"\n  }");

  @Test
  void terraformsOwnTimeoutsBlock_isNotAFinding() {
    assertClean(CHECK.findings(TIMEOUTS.config()));
  }

  // --- the schema itself ---

  @Test
  void theCommittedSchema_isTheOneThePinnedPackageGives_ofAMajorTheVersionCheckAdmits() throws IOException {
    JsonNode pinned = new ObjectMapper().readTree(Trees.TERRAFORM.resolve("check/schema/package-lock.json").toFile())
        .path("packages").path("node_modules/@pulumi/gcp");
    JsonNode source = ProviderSchema.google7().source();
    String hint = "the schema is not what package-lock.json pins: run terraform/check/schema/generate.js";
    assertEquals("@pulumi/gcp@" + pinned.path("version").asText(), source.path("npm").asText(), hint);
    assertEquals(pinned.path("integrity").asText(), source.path("integrity").asText(), hint);
    assertTrue(source.path("provider").asText().startsWith("hashicorp/terraform-provider-google-beta v7."),
        source::toString);
    for (String provider : List.of("hashicorp/google", "hashicorp/google-beta")) {
      assertTrue(ProviderVersionCheck.CHECKED_MAJORS.get(provider).contains(7),
          () -> provider + " 7 is checked here, so its range may admit it: "
              + ProviderVersionCheck.CHECKED_MAJORS.entrySet().stream().map(Object::toString)
                  .collect(Collectors.joining(", ")));
    }
  }
}
