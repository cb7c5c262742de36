package dev.once.terraform.check;

import static dev.once.terraform.check.Trees.assertOneFinding;

import dev.once.terraform.check.Trees.Copy;
import org.junit.jupiter.api.Test;

/**
 * PrivilegeCheck catches a function given more than its code uses (dev.once.functions.FunctionNeeds): planted in a copy of
 * terraform/, each fault is one finding that names the file, the grant or function, and what to do.
 */
class PrivilegeBrokenTreeTest {
  private static final Copy WEBHOOK_WITH_THE_GEMINI_KEY = Copy.replacing("functions.tf",
      "      version    = var.gemini_webhook_secret_version\n    }\n",
      "      version    = var.gemini_webhook_secret_version\n    }\n\n    secret_environment_variables {\n"
          + "      key        = \"GEMINI_API_KEY\"\n      project_id = var.project_id\n"
          + "      secret     = google_secret_manager_secret.gemini_api_key.secret_id\n"
          + "      version    = var.gemini_api_key_version\n    }\n");

  @Test
  void thePublicWebhookGivenTheGeminiKey_isReported() {
    assertOneFinding(PrivilegeCheck.forCode().findings(WEBHOOK_WITH_THE_GEMINI_KEY.config()), "functions.tf",
        "google_cloudfunctions2_function.gemini_webhook", "is given the secret GEMINI_API_KEY",
        "GeminiWebhook never reads");
  }

  private static final Copy WEBHOOK_WRITES_FIRESTORE = Copy.replacing("iam.tf",
      "gemini_webhook    = \"roles/datastore.viewer\"", "gemini_webhook    = \"roles/datastore.user\"");

  @Test
  void aFirestoreWriteRoleForTheWebhook_isReported() {
    assertOneFinding(PrivilegeCheck.forCode().findings(WEBHOOK_WRITES_FIRESTORE.config()), "iam.tf",
        "google_project_iam_member.function_firestore", "grants roles/datastore.user to gemini_webhook",
        "grant roles/datastore.viewer instead");
  }

  private static final Copy WEBHOOK_READS_THE_KEY = Copy.replacing("secrets.tf",
      "for_each = toset([\"document_uploaded\", \"batch_completed\", \"gemini_reconciler\"])\n\n  project   = var.project_id\n  secret_id = google_secret_manager_secret.gemini_api_key.secret_id",
      "for_each = toset([\"document_uploaded\", \"gemini_webhook\", \"batch_completed\", \"gemini_reconciler\"])\n\n  project   = var.project_id\n  secret_id = google_secret_manager_secret.gemini_api_key.secret_id");

  @Test
  void aSecretGrantToAFunctionThatDoesNotReadIt_isReported() {
    assertOneFinding(PrivilegeCheck.forCode().findings(WEBHOOK_READS_THE_KEY.config()), "secrets.tf",
        "google_secret_manager_secret_iam_member.gemini_api_key", "lets gemini_webhook read the secret gemini_api_key",
        "remove gemini_webhook from this grant");
  }

  private static final Copy WEBHOOK_PUBLISHES_RESULTS = Copy.replacing("pubsub.tf",
      "for_each = toset([\"document_uploaded\", \"batch_completed\", \"gemini_reconciler\"])",
      "for_each = toset([\"document_uploaded\", \"batch_completed\", \"gemini_reconciler\", \"gemini_webhook\"])");

  @Test
  void aPublisherGrantOnATopicTheFunctionDoesNotPublishTo_isReported() {
    assertOneFinding(PrivilegeCheck.forCode().findings(WEBHOOK_PUBLISHES_RESULTS.config()), "pubsub.tf",
        "google_pubsub_topic_iam_member.results_publishers", "lets gemini_webhook publish to the topic results");
  }

  private static final Copy WEBHOOK_WITH_A_SETTING_IT_DOES_NOT_READ = Copy.replacing("functions.tf",
      "BATCH_COMPLETIONS_TOPIC = google_pubsub_topic.batch_completions.id\n",
      "BATCH_COMPLETIONS_TOPIC = google_pubsub_topic.batch_completions.id\n      GEMINI_MODEL = var.gemini_model\n");

  @Test
  void aSettingTheFunctionDoesNotRead_isReported() {
    assertOneFinding(PrivilegeCheck.forCode().findings(WEBHOOK_WITH_A_SETTING_IT_DOES_NOT_READ.config()),
        "functions.tf",
        "google_cloudfunctions2_function.gemini_webhook", "sets GEMINI_MODEL, which GeminiWebhook never reads");
  }

  private static final Copy MESSAGE_DELIVERED_READS_THE_INBOX = Copy.replacing("iam.tf",
      "member = google_service_account.function[\"gemini_reconciler\"].member\n}",
      "member = google_service_account.function[\"message_delivered\"].member\n}");

  @Test
  void anInboxReaderThatNeverReadsIt_isReported() {
    assertOneFinding(PrivilegeCheck.forCode().findings(MESSAGE_DELIVERED_READS_THE_INBOX.config()), "iam.tf",
        "google_storage_bucket_iam_member.deferred_document_reader", "lets message_delivered read the inbox");
  }

  private static final Copy STORAGE_AGENT_ON_EVERY_TOPIC = Copy.replacing("agents.tf",
      "  condition {\n    title       = \"not-${var.name_prefix}-topics\"\n", "  labels {\n    title = \"\"\n");

  @Test
  void theStorageAgentsGrantWithoutItsCondition_isReported() {
    assertOneFinding(PrivilegeCheck.forCode().findings(STORAGE_AGENT_ON_EVERY_TOPIC.config()), "agents.tf",
        "google_project_iam_member.gcs_agent_publishes_events", "publish to every topic of the project, ours included",
        "condition it");
  }

  private static final Copy RESULTS_TOPIC_UNTAGGED = Copy.replacing("agents.tf",
      "    results           = google_pubsub_topic.results.name\n", "");

  @Test
  void aTopicTheStorageAgentMayPublishTo_isReported() {
    assertOneFinding(PrivilegeCheck.forCode().findings(RESULTS_TOPIC_UNTAGGED.config()), "pubsub.tf",
        "google_pubsub_topic.results", "does not carry the tag value the Cloud Storage agent's grant excludes",
        "google_tags_tag_binding.topic_refuses_storage_agent");
  }
}
