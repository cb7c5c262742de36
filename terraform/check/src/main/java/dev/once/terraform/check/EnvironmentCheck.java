package dev.once.terraform.check;

import com.fasterxml.jackson.databind.JsonNode;
import dev.once.config.Setting;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The environment Terraform gives the functions against the environment the code reads ({@link Setting}, the
 * registry of every variable): every setting is set by at least one function, or is on one of the two explicit
 * lists below; nothing is set that the code does not read; local-only settings are never set; secrets come only from
 * Secret Manager, and no secret value is ever in Terraform (a secret version's data would sit in the state).
 */
public final class EnvironmentCheck implements Check {
  /** Read by the code, local only, deliberately unset when deployed. Keep this list small and give the reason. */
  public static final Map<String, String> LOCAL_ONLY = Map.of(
      "FIRESTORE_EMULATOR_HOST", "points the Firestore client at an emulator",
      "PUBSUB_EMULATOR_HOST", "points the Pub/Sub client at an emulator",
      "STORAGE_EMULATOR_HOST", "points the Cloud Storage client at a local stand-in",
      "GEMINI_BASE_URL", "points the Gemini client at a local stand-in instead of Google's API");

  /** Read by the runtime, not by the code: a function may set them although {@code Setting} does not list them. */
  public static final Map<String, String> READ_BY_THE_RUNTIME = Map.of(
      "JAVA_TOOL_OPTIONS", "flags the JVM reads when an instance starts (var.jvm_options)");

  /**
   * Read by the code and deliberately left to the code's default when deployed (the setting must have one). Empty:
   * today every deployed setting is set explicitly, so a deployment shows its values.
   */
  public static final Map<String, String> DEFAULTED_WHEN_DEPLOYED = Map.of();

  /**
   * Set by Terraform before the code reads them, while a feature's Terraform side is ready before its code. A name here
   * may be set although {@code Setting} does not list it. Once {@code Setting} lists it the check fails until it is
   * deleted from here. Empty: the spending guard's settings (issue 14) are read by the code now.
   */
  public static final Map<String, String> PENDING_IN_CODE = Map.of();

  private final Map<String, String> settings;
  private final Map<String, String> defaults;
  private final Map<String, String> localOnly;
  private final Map<String, String> defaulted;
  private final Map<String, String> pending;

  /**
   * @param settings every variable the code reads, with its description
   * @param defaults the code's default value of those that have one
   */
  public EnvironmentCheck(Map<String, String> settings, Map<String, String> defaults,
      Map<String, String> localOnly, Map<String, String> defaulted) {
    this(settings, defaults, localOnly, defaulted, Map.of());
  }

  /** @param pending set by Terraform although the code does not read them yet ({@link #PENDING_IN_CODE}) */
  public EnvironmentCheck(Map<String, String> settings, Map<String, String> defaults,
      Map<String, String> localOnly, Map<String, String> defaulted, Map<String, String> pending) {
    this.settings = Map.copyOf(settings);
    this.defaults = Map.copyOf(defaults);
    this.localOnly = Map.copyOf(localOnly);
    this.defaulted = Map.copyOf(defaulted);
    this.pending = Map.copyOf(pending);
  }

  /** The check against the code as it is: {@link CodeSettings#all()} and the lists above. */
  public static EnvironmentCheck forCode() {
    Map<String, String> settings = new LinkedHashMap<>();
    Map<String, String> defaults = new LinkedHashMap<>();
    for (Setting s : CodeSettings.all()) {
      settings.put(s.name(), s.description());
      if (s.defaultValue() != null) {
        defaults.put(s.name(), s.defaultValue());
      }
    }
    return new EnvironmentCheck(settings, defaults, LOCAL_ONLY, DEFAULTED_WHEN_DEPLOYED, PENDING_IN_CODE);
  }

  /** A value the function must get from Secret Manager, never as a plain (state-visible) variable. */
  static boolean isSecret(String name) {
    return name.endsWith("_KEY") || name.endsWith("_SECRET") || name.contains("PASSWORD") || name.contains("TOKEN");
  }

  @Override
  public List<Finding> findings(TerraformConfig config) {
    List<Finding> findings = new ArrayList<>();
    checkLists(findings);
    Set<String> setAnywhere = new LinkedHashSet<>();
    List<Block> functions = config.resources("google_cloudfunctions2_function");
    for (Block function : functions) {
      JsonNode service = function.nested("service_config");
      JsonNode plain = service.path("environment_variables");
      if (!plain.isMissingNode() && !plain.isObject()) {
        findings.add(new Finding(function.file(), function.address(),
            "service_config.environment_variables is computed ("
                + plain.asText() + "), so the check cannot see which variables it sets.",
            "write it as a literal map { NAME = value, … } (values may be expressions)."));
      }
      for (Iterator<String> names = plain.fieldNames(); names.hasNext();) {
        String name = names.next();
        checkName(function, name, false, findings);
        setAnywhere.add(name);
      }
      for (JsonNode secret : TerraformConfig.asList(service.path("secret_environment_variables"))) {
        String name = config.literal(secret.path("key")).orElse("");
        if (name.isEmpty()) {
          findings.add(new Finding(function.file(), function.address(),
              "has a secret_environment_variables block without a literal key.",
              "set key to the variable name, e.g. \"GEMINI_API_KEY\"."));
          continue;
        }
        checkName(function, name, true, findings);
        setAnywhere.add(name);
      }
    }
    String where = functions.isEmpty() ? "functions.tf" : functions.get(0).file();
    for (var setting : settings.entrySet()) {
      String name = setting.getKey();
      if (!setAnywhere.contains(name) && !localOnly.containsKey(name) && !defaulted.containsKey(name)) {
        findings.add(new Finding(where, "google_cloudfunctions2_function.*", name
            + " is read by the code (" + name + ": " + setting.getValue() + ") but no function sets it.",
            "set it in the environment_variables"
                + (isSecret(name) ? " (secret_environment_variables: it is a secret)" : "")
                + " of each function that reads it; if only local runs need it, add it to EnvironmentCheck.LOCAL_ONLY,"
                + " or if the code's default suits every deployment, to EnvironmentCheck.DEFAULTED_WHEN_DEPLOYED, with the reason."));
      }
    }
    for (Block version : config.resources("google_secret_manager_secret_version")) {
      findings.add(new Finding(version.file(), version.address(),
          "puts a secret value into Terraform (a version's secret_data is stored in the state).",
          "delete it and add versions with `gcloud secrets versions add SECRET --data-file=-` (docs/DEPLOY.md: first deploy)."));
    }
    return findings;
  }

  private void checkName(Block function, String name, boolean fromSecretManager, List<Finding> findings) {
    if (localOnly.containsKey(name)) {
      findings.add(new Finding(function.file(), function.address(), "sets " + name + ", which is for local runs only ("
          + localOnly.get(name) + ").", "remove it: a deployed function must use the real service."));
    } else if (!settings.containsKey(name) && !pending.containsKey(name) && !READ_BY_THE_RUNTIME.containsKey(name)) {
      findings.add(new Finding(function.file(), function.address(), "sets " + name
          + ", which the code never reads (it is in neither OnceSetting nor PipelineSetting).",
          "remove it, or add the setting to PipelineSetting if the code is meant to read it."));
    } else if (isSecret(name) && !fromSecretManager) {
      findings.add(new Finding(function.file(), function.address(), "sets the secret " + name
          + " as a plain environment variable, which puts its value in the Terraform state and the function's config.",
          "move it to a secret_environment_variables block that reads it from Secret Manager."));
    }
  }

  private void checkLists(List<Finding> findings) {
    for (String name : localOnly.keySet()) {
      if (!settings.containsKey(name)) {
        findings.add(
            new Finding("EnvironmentCheck.java", "LOCAL_ONLY", name + " is listed but the code no longer reads it.",
                "remove it from the list."));
      }
    }
    for (String name : defaulted.keySet()) {
      if (!settings.containsKey(name)) {
        findings.add(new Finding("EnvironmentCheck.java", "DEFAULTED_WHEN_DEPLOYED", name
            + " is listed but the code no longer reads it.", "remove it from the list."));
      } else if (!defaults.containsKey(name)) {
        findings.add(new Finding("EnvironmentCheck.java", "DEFAULTED_WHEN_DEPLOYED", name
            + " has no default in the code, so a deployment that leaves it unset fails at its first request.",
            "set it in Terraform instead, or give the setting a default."));
      }
    }
    for (String name : pending.keySet()) {
      if (settings.containsKey(name)) {
        findings.add(new Finding("EnvironmentCheck.java", "PENDING_IN_CODE", name
            + " is read by the code now (" + name + "), so it is no longer pending.",
            "delete it from EnvironmentCheck.PENDING_IN_CODE."));
      }
    }
  }
}
