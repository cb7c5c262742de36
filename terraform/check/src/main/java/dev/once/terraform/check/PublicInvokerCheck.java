package dev.once.terraform.check;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Only the webhook is public: it authenticates Gemini's deliveries itself (Standard Webhooks signatures). Every
 * other function is invoked by an identity that IAM checks (Eventarc's trigger account, Cloud Scheduler's OIDC
 * token). So an IAM grant to allUsers or allAuthenticatedUsers may only target the webhook's service, and the
 * webhook must have one, or Gemini cannot reach it.
 */
public final class PublicInvokerCheck implements Check {
  public static final String WEBHOOK = "dev.once.functions.GeminiWebhook";

  private static final Set<String> PUBLIC = Set.of("allUsers", "allAuthenticatedUsers");
  private static final Pattern FUNCTION_REF = Pattern.compile("google_cloudfunctions2?_function\\.([A-Za-z0-9_-]+)");
  /** IAM resources that can open a function (or everything) to the public, and the attributes naming the target. */
  private static final List<String> TARGET_ATTRIBUTES = List.of("service", "name", "cloud_function");

  private final String webhookEntryPoint;

  public PublicInvokerCheck(String webhookEntryPoint) {
    this.webhookEntryPoint = webhookEntryPoint;
  }

  @Override
  public List<Finding> findings(TerraformConfig config) {
    List<Finding> findings = new ArrayList<>();
    int webhookPublic = 0;
    for (Block grant : config.resources()) {
      if (!isIamGrant(grant.type()) || !grantsPublic(grant.body())) {
        continue;
      }
      if (grant.type().startsWith("google_project_iam") || grant.type().startsWith("google_organization_iam")
          || grant.type().startsWith("google_folder_iam")) {
        findings.add(new Finding(grant.file(), grant.address(), "grants " + grant.body().path("role").asText()
            + " to the public on the whole project or hierarchy.",
            "remove it; only the webhook's own service may be public."));
        continue;
      }
      Optional<String> target = target(grant.body());
      Optional<Block> function = target.flatMap(t -> referencedFunction(config, t));
      Optional<String> entryPoint = function.flatMap(f -> config.literal(f.nested("build_config").path("entry_point")));
      if (entryPoint.equals(Optional.of(webhookEntryPoint))) {
        webhookPublic++;
      } else {
        findings.add(new Finding(grant.file(), grant.address(),
            "makes " + entryPoint.orElse(target.orElse("its target"))
                + " callable by anyone; only " + webhookEntryPoint + " may be public (it verifies signatures itself).",
            "grant run.invoker to the caller's service account instead (trigger or scheduler account)."));
      }
    }
    for (Block policy : config.typed("data")) {
      if (policy.type().equals("google_iam_policy") && grantsPublicInPolicy(policy.body())) {
        findings.add(new Finding(policy.file(), policy.address(),
            "builds a policy with a public member, which this check cannot attribute.",
            "grant public access with a *_iam_member on the webhook's service only."));
      }
    }
    if (webhookPublic == 0) {
      Block webhook = config.functionsByEntryPoint().get(webhookEntryPoint);
      findings.add(new Finding(webhook == null ? "functions.tf" : webhook.file(),
          webhook == null ? "google_cloudfunctions2_function" : webhook.address(),
          webhookEntryPoint + " is not public, so Gemini's webhook deliveries are refused before the code sees them.",
          "add a google_cloud_run_service_iam_member with role roles/run.invoker and member allUsers on its service."));
    }
    return findings;
  }

  private static boolean isIamGrant(String type) {
    return type.matches("google_.*_iam_(member|binding)");
  }

  private static boolean grantsPublic(JsonNode body) {
    if (PUBLIC.contains(body.path("member").asText())) {
      return true;
    }
    for (JsonNode member : body.path("members")) {
      if (PUBLIC.contains(member.asText())) {
        return true;
      }
    }
    return body.path("members").isTextual() && PUBLIC.stream().anyMatch(body.path("members").asText()::contains);
  }

  private static boolean grantsPublicInPolicy(JsonNode body) {
    for (JsonNode binding : TerraformConfig.asList(body.path("binding"))) {
      for (JsonNode member : binding.path("members")) {
        if (PUBLIC.contains(member.asText())) {
          return true;
        }
      }
    }
    return false;
  }

  private static Optional<String> target(JsonNode body) {
    for (String attribute : TARGET_ATTRIBUTES) {
      if (body.path(attribute).isTextual()) {
        return Optional.of(body.path(attribute).asText());
      }
    }
    return Optional.empty();
  }

  private static Optional<Block> referencedFunction(TerraformConfig config, String expression) {
    Matcher m = FUNCTION_REF.matcher(expression);
    if (!m.find()) {
      return Optional.empty();
    }
    return config.resources("google_cloudfunctions2_function").stream().filter(f -> f.name().equals(m.group(1)))
        .findFirst();
  }
}
