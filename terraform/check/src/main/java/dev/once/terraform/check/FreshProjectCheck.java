package dev.once.terraform.check;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The apply works on a fresh project (hashicorp/terraform-provider-google#25294): the Eventarc and
 * Pub/Sub service agents are created with google_project_service_identity (google-beta) and Cloud Storage's with
 * its data source; Eventarc's holds roles/eventarc.serviceAgent; a time_sleep waits on those agents' grants; every
 * function with an event trigger depends on that wait. Also: the APIs include cloudresourcemanager, every Google data
 * source waits for the APIs (it is read during the plan), and both Google providers bill a quota project (user_project_override, billing_project), which Firebase Rules and Billing Budgets
 * need with user credentials.
 */
public final class FreshProjectCheck implements Check {
  static final List<String> AGENTS = List.of("eventarc.googleapis.com", "pubsub.googleapis.com");
  static final Set<String> APIS = Set.of("cloudresourcemanager.googleapis.com");

  @Override
  public List<Finding> findings(TerraformConfig config) {
    List<Finding> findings = new ArrayList<>();
    List<Block> identities = config.resources("google_project_service_identity");
    String where = identities.isEmpty() ? "agents.tf" : identities.get(0).file();
    List<String> agentRefs = new ArrayList<>();
    for (String service : AGENTS) {
      Optional<Block> identity = identities.stream()
          .filter(b -> config.literal(b.body().path("service")).equals(Optional.of(service))).findFirst();
      if (identity.isEmpty()) {
        findings.add(new Finding(where, "google_project_service_identity", "the " + service
            + " service agent is not created: on a fresh project it may not exist yet when the first trigger is made.",
            "add a google_project_service_identity (provider = google-beta) with service = \"" + service + "\"."));
        continue;
      }
      agentRefs.add(identity.get().address());
      if (!identity.get().body().path("provider").asText().contains("google-beta")) {
        findings.add(new Finding(identity.get().file(), identity.get().address(),
            "does not use the google-beta provider, which is where google_project_service_identity lives.",
            "set provider = google-beta."));
      }
    }
    List<Block> storageAgent =
        config.typed("data").stream().filter(b -> b.type().equals("google_storage_project_service_account")).toList();
    if (storageAgent.isEmpty()) {
      findings.add(new Finding(where, "data.google_storage_project_service_account",
          "the Cloud Storage service agent is never looked up, which is what creates it.",
          "add data \"google_storage_project_service_account\" and grant it roles/pubsub.publisher."));
    } else {
      agentRefs.add(storageAgent.get(0).address());
    }
    List<String> grants = new ArrayList<>(); // addresses of grants to an agent
    Optional<String> eventarc = identities.stream().filter(b -> config.literal(b.body().path("service"))
        .equals(Optional.of("eventarc.googleapis.com"))).map(Block::address).findFirst();
    boolean eventarcRole = false;
    for (Block grant : config.resources()) {
      if (!grant.type().endsWith("_iam_member")) {
        continue;
      }
      String member = grant.body().path("member").asText();
      if (agentRefs.stream().anyMatch(a -> member.contains(a))) {
        grants.add(grant.address());
        eventarcRole |= eventarc.map(member::contains).orElse(false)
            && config.literal(grant.body().path("role")).equals(Optional.of("roles/eventarc.serviceAgent"));
      }
    }
    if (eventarc.isPresent() && !eventarcRole) {
      findings.add(new Finding(where, eventarc.get(),
          "is not granted roles/eventarc.serviceAgent, so triggers fail with \"Permission denied while using the Eventarc Service Agent\".",
          "add a google_project_iam_member with that role for its email."));
    }
    List<Block> sleeps = config.resources("time_sleep").stream()
        .filter(s -> agentRefs.size() == AGENTS.size() + 1
            && agentRefs.stream().allMatch(a -> waitsOn(config, s, a, grants)))
        .toList();
    if (sleeps.isEmpty()) {
      findings.add(new Finding(where, "time_sleep",
          "nothing waits for the service agents' roles to propagate before the triggers are created.",
          "add a time_sleep whose triggers (or depends_on) name each agent's grant, and make the event-triggered functions depend on it."));
    }
    for (Block function : config.resources("google_cloudfunctions2_function")) {
      JsonNode trigger = function.nested("event_trigger");
      if (!trigger.isObject() || trigger.isEmpty()) {
        continue;
      }
      boolean waits = sleeps.stream().anyMatch(s -> dependsOn(function, s.address()));
      if (!waits && !sleeps.isEmpty()) {
        findings.add(new Finding(function.file(), function.address(),
            "has an event trigger but does not wait for the service agents (" + sleeps.get(0).address() + ").",
            "add " + sleeps.get(0).address() + " to its depends_on."));
      }
    }
    for (Block apis : config.resources("google_project_service")) {
      Set<String> enabled = ReferenceCheck.forEachKeys(config, apis.body().path("for_each")).orElse(Set.of());
      for (String api : APIS) {
        if (!enabled.isEmpty() && !enabled.contains(api)) {
          findings.add(new Finding(apis.file(), apis.address(), "does not enable " + api + ".", "add it to the list."));
        }
      }
    }
    // A data source is read during the plan, through its API: on a fresh project that API may still be off.
    String enabling = config.resources("google_project_service").stream().findFirst().map(Block::address)
        .orElse("google_project_service.apis");
    for (Block data : config.typed("data")) {
      if (data.type().startsWith("google_") && !dependsOn(data, enabling)) {
        findings.add(new Finding(data.file(), data.address(), "is read through a Google API that may still be off on a"
            + " fresh project (the plan fails) unless it waits for the APIs to be enabled.",
            "add depends_on = [" + enabling + "]."));
      }
    }
    for (Block provider : config.named("provider")) {
      if (!provider.name().startsWith("google")) {
        continue;
      }
      if (!provider.body().path("user_project_override").asBoolean(false) || !provider.body().has("billing_project")) {
        findings.add(new Finding(provider.file(), "provider." + provider.name(),
            "bills no quota project: with user credentials,"
                + " Firebase Rules and Billing Budgets calls are refused (\"requires a quota project\").",
            "set user_project_override = true and billing_project = var.project_id."));
      }
    }
    return findings;
  }

  private static boolean dependsOn(Block block, String address) {
    for (JsonNode dependency : block.body().path("depends_on")) {
      if (dependency.asText().equals("${" + address + "}")) {
        return true;
      }
    }
    return false;
  }

  /** The sleep names the agent's grant (or the agent itself) among its triggers or dependencies. */
  private static boolean waitsOn(TerraformConfig config, Block sleep, String agent, List<String> grants) {
    return config.references().stream()
        .filter(r -> r.path().size() > 2 && r.path().get(0).equals("resource") && r.path().get(1).equals("time_sleep")
            && r.path().get(2).equals(sleep.name()))
        .map(TerraformConfig.Reference::ref)
        .anyMatch(ref -> ref.startsWith(agent)
            || grants.stream().filter(g -> grantOf(config, g, agent)).anyMatch(ref::startsWith));
  }

  private static boolean grantOf(TerraformConfig config, String grant, String agent) {
    return config.resources().stream().filter(b -> b.address().equals(grant))
        .anyMatch(b -> b.body().path("member").asText().contains(agent));
  }
}
