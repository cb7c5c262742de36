package dev.once.terraform.check;

import com.fasterxml.jackson.databind.JsonNode;
import dev.once.functions.FunctionNeeds;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Least privilege: no function gets more than its own code uses ({@link FunctionNeeds}, which says, for each entry point, the
 * settings and secrets it reads, whether it writes Firestore, the topics it publishes to and whether it reads the
 * inbox). Each function's environment and secrets must be among its needs; its Firestore role is datastore.viewer
 * when it only reads; a secret is readable (secretAccessor) only by the functions that read it; a topic's publisher
 * grant only for the functions that publish to it; the inbox's object reader only for the functions that read it.
 * And the Cloud Storage service agent, which Eventarc needs to publish on the project (to a topic Eventarc names), may
 * publish to none of ours: its grant excludes a tag value that every topic here carries (agents.tf says why a tag).
 */
public final class PrivilegeCheck implements Check {
  private static final Pattern FUNCTION_KEY =
      Pattern.compile("google_service_account\\.function\\[\"?([a-z_]+|each\\.key)\"?\\]");
  private static final Pattern RESOURCE = Pattern.compile("\\$\\{(google_[a-z_]+)\\.([a-z_0-9]+)\\.[a-z_]+\\}");
  private static final Pattern TOSET = Pattern.compile("\"([a-z_]+)\"");
  private static final String VIEWER = "roles/datastore.viewer";
  private static final String STORAGE_AGENT = "data.google_storage_project_service_account.";
  private static final Pattern TOPIC = Pattern.compile("google_pubsub_topic\\.([a-z_0-9]+)\\.");
  private static final Pattern TAG_VALUE = Pattern.compile("google_tags_tag_value\\.([a-z_0-9]+)\\.id");
  private static final Pattern EXCLUDES_TAG = Pattern.compile(
      "^!\\s*resource\\.matchTagId\\('\\$\\{google_tags_tag_key\\.[a-z_0-9]+\\.id\\}',"
          + " '\\$\\{google_tags_tag_value\\.([a-z_0-9]+)\\.id\\}'\\)$");

  private final Map<String, FunctionNeeds.Function> needs;

  public PrivilegeCheck(Map<String, FunctionNeeds.Function> needs) {
    this.needs = Map.copyOf(needs);
  }

  /** Against the code as it is. */
  public static PrivilegeCheck forCode() {
    return new PrivilegeCheck(FunctionNeeds.all());
  }

  /** What one function block is given. */
  private record Given(Block block, String key, FunctionNeeds.Function needs, Map<String, String> secretOf,
      Set<String> topicsPublished) {}

  @Override
  public List<Finding> findings(TerraformConfig config) {
    List<Finding> findings = new ArrayList<>();
    Map<String, Given> byKey = new HashMap<>();
    for (Map.Entry<String, Block> function : config.functionsByEntryPoint().entrySet()) {
      Block block = function.getValue();
      FunctionNeeds.Function need = needs.get(function.getKey());
      if (need == null) {
        continue; // EntryPointCheck reports an entry point that is not a function of the code
      }
      String key = functionKey(block.nested("service_config").path("service_account_email").asText()).orElse(null);
      if (key == null) {
        findings.add(new Finding(block.file(), block.address(), "runs as an account that is not one of"
            + " google_service_account.function, so its roles cannot be checked.",
            "set service_account_email = google_service_account.function[\"KEY\"].email."));
        continue;
      }
      Given given = given(block, key, need);
      byKey.put(key, given);
      checkEnvironment(given, findings);
    }
    checkFirestoreRoles(config, byKey, findings);
    checkSecretGrants(config, byKey, findings);
    checkPublisherGrants(config, byKey, findings);
    checkInboxReaders(config, byKey, findings);
    checkStorageAgent(config, findings);
    return findings;
  }

  private static Given given(Block block, String key, FunctionNeeds.Function need) {
    JsonNode service = block.nested("service_config");
    Map<String, String> secretOf = new HashMap<>();
    for (JsonNode secret : TerraformConfig.asList(service.path("secret_environment_variables"))) {
      resource(secret.path("secret").asText()).ifPresent(r -> secretOf.put(r, secret.path("key").asText()));
    }
    Set<String> topics = new LinkedHashSet<>();
    JsonNode env = service.path("environment_variables");
    for (String setting : need.publishesTo()) {
      resource(env.path(setting).asText()).ifPresent(topics::add);
    }
    return new Given(block, key, need, secretOf, topics);
  }

  private void checkEnvironment(Given given, List<Finding> findings) {
    JsonNode service = given.block().nested("service_config");
    for (Iterator<String> names = service.path("environment_variables").fieldNames(); names.hasNext();) {
      String name = names.next();
      if (!given.needs().settings().contains(name) && !EnvironmentCheck.READ_BY_THE_RUNTIME.containsKey(name)) {
        findings.add(new Finding(given.block().file(), given.block().address(), "sets " + name + ", which "
            + simple(given.needs()) + " never reads (dev.once.functions.FunctionNeeds).",
            "remove it from this function; set it only on the functions that read it."));
      }
    }
    for (String secret : given.secretOf().values()) {
      if (!given.needs().secrets().contains(secret)) {
        findings.add(new Finding(given.block().file(), given.block().address(), "is given the secret " + secret
            + ", which " + simple(given.needs())
            + " never reads: a function that does not use a secret must not hold it.",
            "remove the secret_environment_variables block, and its secretAccessor grant (secrets.tf)."));
      }
    }
  }

  private static void checkFirestoreRoles(TerraformConfig config, Map<String, Given> byKey, List<Finding> findings) {
    for (Block grant : config.resources("google_project_iam_member")) {
      if (!grant.body().path("member").asText().contains("google_service_account.function[")) {
        continue;
      }
      Map<String, String> roles = rolesByFunction(config, grant, byKey.keySet());
      for (Map.Entry<String, String> role : roles.entrySet()) {
        Given given = byKey.get(role.getKey());
        if (given != null && given.needs().firestore() == FunctionNeeds.Firestore.READ
            && role.getValue().startsWith("roles/datastore.")
            && !role.getValue().equals(VIEWER)) {
          findings.add(new Finding(grant.file(), grant.address(), "grants " + role.getValue() + " to " + role.getKey()
              + ", whose code only reads Firestore (" + simple(given.needs()) + ").",
              "grant " + VIEWER + " instead."));
        }
      }
    }
  }

  /** The role each function gets from a project grant: a literal role, or local.NAME[each.key] of a literal map. */
  private static Map<String, String> rolesByFunction(TerraformConfig config, Block grant, Set<String> functions) {
    Map<String, String> roles = new HashMap<>();
    String role = grant.body().path("role").asText();
    Matcher mapped = Pattern.compile("\\$\\{local\\.([a-z_]+)\\[each\\.key\\]\\}").matcher(role);
    Set<String> keys = forEachKeys(grant, functions);
    if (mapped.matches()) {
      JsonNode map = config.locals().stream().filter(l -> l.name().equals(mapped.group(1))).findFirst()
          .map(Block::body).orElse(null);
      for (String key : keys) {
        if (map != null && map.path(key).isTextual()) {
          roles.put(key, map.path(key).asText());
        }
      }
    } else {
      keys.forEach(key -> roles.put(key, role));
    }
    return roles;
  }

  private void checkSecretGrants(TerraformConfig config, Map<String, Given> byKey, List<Finding> findings) {
    for (Block grant : config.resources("google_secret_manager_secret_iam_member")) {
      Optional<String> secret = resource(grant.body().path("secret_id").asText());
      if (secret.isEmpty()) {
        continue;
      }
      for (String key : forEachKeys(grant, byKey.keySet())) {
        Given given = byKey.get(key);
        if (given != null && !given.secretOf().containsKey(secret.get())) {
          findings.add(new Finding(grant.file(), grant.address(), "lets " + key + " read the secret " + secret.get()
              + ", which " + simple(given.needs()) + " is not given (its code does not read it).",
              "remove " + key + " from this grant."));
        }
      }
    }
  }

  private void checkPublisherGrants(TerraformConfig config, Map<String, Given> byKey, List<Finding> findings) {
    for (Block grant : config.resources("google_pubsub_topic_iam_member")) {
      Optional<String> topic = resource(grant.body().path("topic").asText());
      if (topic.isEmpty() || !grant.body().path("role").asText().equals("roles/pubsub.publisher")) {
        continue;
      }
      for (String key : forEachKeys(grant, byKey.keySet())) {
        Given given = byKey.get(key);
        if (given != null && !given.topicsPublished().contains(topic.get())) {
          findings.add(new Finding(grant.file(), grant.address(), "lets " + key + " publish to the topic " + topic.get()
              + ", which " + simple(given.needs()) + " does not publish to.", "remove " + key + " from this grant."));
        }
      }
    }
  }

  private void checkInboxReaders(TerraformConfig config, Map<String, Given> byKey, List<Finding> findings) {
    for (Block grant : config.resources("google_storage_bucket_iam_member")) {
      if (!grant.body().path("bucket").asText().contains("google_storage_bucket.inbox.")) {
        continue;
      }
      for (String key : forEachKeys(grant, byKey.keySet())) {
        Given given = byKey.get(key);
        if (given != null && !given.needs().readsInbox()) {
          findings.add(new Finding(grant.file(), grant.address(), "lets " + key + " read the inbox, which "
              + simple(given.needs()) + " never reads.", "remove this grant."));
        }
      }
    }
  }

  /**
   * The storage agent's project grant must be conditioned "!resource.matchTagId(KEY, VALUE)", and every topic must be
   * bound to VALUE: else whoever can configure a bucket's notifications publishes, as the agent, to that topic.
   */
  private static void checkStorageAgent(TerraformConfig config, List<Finding> findings) {
    Set<String> excluded = new LinkedHashSet<>();
    for (Block grant : config.resources("google_project_iam_member")) {
      if (!grant.body().path("member").asText().contains(STORAGE_AGENT)) {
        continue;
      }
      Matcher condition = EXCLUDES_TAG.matcher(grant.nested("condition").path("expression").asText().strip());
      if (condition.matches()) {
        excluded.add(condition.group(1));
      } else {
        findings.add(new Finding(grant.file(), grant.address(), "lets the Cloud Storage agent, and so whoever can"
            + " point a bucket's notifications at a topic, publish to every topic of the project, ours included.",
            "condition it: expression = \"!resource.matchTagId('${google_tags_tag_key.K.id}',"
                + " '${google_tags_tag_value.V.id}')\", with V bound to each of our topics (agents.tf)."));
      }
    }
    for (Block grant : config.resources("google_pubsub_topic_iam_member")) {
      if (grant.body().path("member").asText().contains(STORAGE_AGENT)) {
        findings.add(new Finding(grant.file(), grant.address(), "lets the Cloud Storage agent publish to one of our"
            + " topics, which only the pipeline's functions may publish to.", "remove this grant."));
      }
    }
    if (excluded.isEmpty()) {
      return;
    }
    Set<String> tagged = new LinkedHashSet<>();
    for (Block binding : config.resources("google_tags_tag_binding")) {
      Matcher value = TAG_VALUE.matcher(binding.body().path("tag_value").asText());
      if (value.find() && excluded.contains(value.group(1))) {
        Matcher topics = TOPIC.matcher(binding.body().path("for_each").toString()
            + binding.body().path("parent").asText());
        while (topics.find()) {
          tagged.add(topics.group(1));
        }
      }
    }
    for (Block topic : config.resources("google_pubsub_topic")) {
      if (!tagged.contains(topic.name())) {
        findings.add(new Finding(topic.file(), topic.address(), "does not carry the tag value the Cloud Storage agent's"
            + " grant excludes, so the agent (whoever configures a bucket's notifications) may publish to it.",
            "bind it: add it to google_tags_tag_binding.topic_refuses_storage_agent (agents.tf)."));
      }
    }
  }

  /** The function keys a grant is for: its member's literal key, or its for_each set's (toset([...]) or local.functions). */
  private static Set<String> forEachKeys(Block grant, Set<String> functions) {
    Set<String> keys = new LinkedHashSet<>();
    Optional<String> member = functionKey(grant.body().path("member").asText());
    if (member.isEmpty()) {
      return keys;
    }
    if (!member.get().equals("each.key")) {
      keys.add(member.get());
      return keys;
    }
    String forEach = grant.body().path("for_each").asText();
    if (forEach.contains("local.functions")) {
      keys.addAll(functions);
      return keys;
    }
    Matcher names = TOSET.matcher(forEach);
    while (names.find()) {
      keys.add(names.group(1));
    }
    return keys;
  }

  private static Optional<String> functionKey(String expression) {
    Matcher matcher = FUNCTION_KEY.matcher(expression);
    return matcher.find() ? Optional.of(matcher.group(1)) : Optional.empty();
  }

  /** {@code ${google_x.NAME.attr}} → NAME. */
  private static Optional<String> resource(String expression) {
    Matcher matcher = RESOURCE.matcher(expression);
    return matcher.find() ? Optional.of(matcher.group(2)) : Optional.empty();
  }

  private static String simple(FunctionNeeds.Function function) {
    return function.entryPoint().substring(function.entryPoint().lastIndexOf('.') + 1);
  }
}
