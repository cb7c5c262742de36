package dev.once.terraform.check;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Nothing is dropped after a day of retries: the subscription of every event trigger gets a dead-letter policy from
 * the deployment itself. The provider cannot configure the subscription Eventarc creates
 * (hashicorp/terraform-provider-google#25069), so a resource that depends on the trigger runs, as a local-exec,
 * {@code gcloud pubsub subscriptions update … --dead-letter-topic} and grants the Pub/Sub service agent
 * roles/pubsub.subscriber on the subscription; the agent is also a publisher on a topic (the dead-letter topic).
 */
public final class DeadLetterCheck implements Check {
  static final List<String> COMMAND_PARTS = List.of("gcloud pubsub subscriptions update", "--dead-letter-topic",
      "--max-delivery-attempts", "add-iam-policy-binding", "roles/pubsub.subscriber");

  @Override
  public List<Finding> findings(TerraformConfig config) {
    List<Finding> findings = new ArrayList<>();
    for (Block function : config.resources("google_cloudfunctions2_function")) {
      JsonNode trigger = function.nested("event_trigger");
      if (!trigger.isObject() || trigger.isEmpty()) {
        continue;
      }
      String triggerRef = function.address() + ".event_trigger";
      List<Block> appliers = config.references().stream()
          .filter(r -> r.ref().startsWith(triggerRef) && r.path().size() > 2 && r.path().get(0).equals("resource"))
          .map(r -> r.path().get(1) + "." + r.path().get(2)).distinct()
          .flatMap(address -> config.resources().stream().filter(b -> b.address().equals(address)))
          .filter(DeadLetterCheck::appliesDeadLetter)
          .toList();
      if (appliers.isEmpty()) {
        findings.add(new Finding(function.file(), function.address(),
            "has an event trigger whose subscription gets no dead-letter policy:"
                + " an event that fails for a day is dropped.",
            "add it to the for_each of terraform_data.trigger_dead_letter (pubsub.tf),"
                + " whose local-exec runs " + String.join(", ", COMMAND_PARTS) + "."));
      }
    }
    boolean agentPublishes = config.resources("google_pubsub_topic_iam_member").stream()
        .anyMatch(b -> config.literal(b.body().path("role")).equals(Optional.of("roles/pubsub.publisher"))
            && pubsubAgent(config).map(a -> b.body().path("member").asText().contains(a)).orElse(false));
    if (!agentPublishes) {
      findings.add(new Finding("pubsub.tf", "google_pubsub_topic_iam_member",
          "the Pub/Sub service agent may not publish to the dead-letter topic,"
              + " so dead-lettering fails and the event is retried until it expires.",
          "grant roles/pubsub.publisher on the dead-letter topic to google_project_service_identity.pubsub."));
    }
    return findings;
  }

  private static Optional<String> pubsubAgent(TerraformConfig config) {
    return config.resources("google_project_service_identity").stream()
        .filter(b -> config.literal(b.body().path("service")).equals(Optional.of("pubsub.googleapis.com")))
        .map(Block::address).findFirst();
  }

  private static boolean appliesDeadLetter(Block block) {
    for (JsonNode exec : TerraformConfig.asList(block.body().path("provisioner").path("local-exec"))) {
      String command = exec.path("command").asText();
      if (COMMAND_PARTS.stream().allMatch(command::contains)) {
        return true;
      }
    }
    return false;
  }
}
