package dev.once.terraform.check;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.cloud.functions.CloudEventsFunction;
import com.google.cloud.functions.HttpFunction;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Each function's entry point names a public class, loadable from the functions' classpath, with a public no-argument
 * constructor (the Functions Framework instantiates it), implementing the interface its trigger needs: an
 * {@code event_trigger} delivers CloudEvents ({@link CloudEventsFunction}), no trigger means HTTP
 * ({@link HttpFunction}). Event triggers must retry: the code throws to be redelivered (an in-flight claim, a
 * transient failure), and without RETRY_POLICY_RETRY such an event would be dropped.
 */
public final class EntryPointCheck implements Check {
  static final String RETRY = "RETRY_POLICY_RETRY";

  private final ClassLoader functions;

  /** @param functions a class loader that sees the deployed functions (once-functions and its dependencies) */
  public EntryPointCheck(ClassLoader functions) {
    this.functions = functions;
  }

  @Override
  public List<Finding> findings(TerraformConfig config) {
    List<Finding> findings = new ArrayList<>();
    Map<String, String> seen = new HashMap<>();
    for (Block function : config.resources("google_cloudfunctions2_function")) {
      Optional<String> entryPoint = config.literal(function.nested("build_config").path("entry_point"));
      if (entryPoint.isEmpty()) {
        findings.add(new Finding(function.file(), function.address(), "has no literal build_config.entry_point.",
            "set entry_point to the fully qualified class name, e.g. \"dev.once.functions.GeminiWebhook\"."));
        continue;
      }
      String previous = seen.putIfAbsent(entryPoint.get(), function.address());
      if (previous != null) {
        findings.add(new Finding(function.file(), function.address(), "deploys " + entryPoint.get()
            + " a second time (also " + previous + ").", "give each function its own entry point."));
      }
      JsonNode trigger = function.nested("event_trigger");
      boolean event = trigger.isObject() && !trigger.isEmpty();
      checkClass(function, entryPoint.get(), event, findings);
      if (event) {
        Optional<String> retry = config.literal(trigger.path("retry_policy"));
        if (!retry.equals(Optional.of(RETRY))) {
          findings.add(new Finding(function.file(), function.address(), "has retry_policy " + retry.orElse("(unset)")
              + ", but " + entryPoint.get()
              + " throws to have an event redelivered (in-flight claim, transient failure).",
              "set event_trigger.retry_policy = \"" + RETRY + "\"."));
        }
      }
    }
    return findings;
  }

  private void checkClass(Block function, String entryPoint, boolean event, List<Finding> findings) {
    Class<?> type;
    try {
      type = Class.forName(entryPoint, false, functions);
    } catch (ClassNotFoundException | LinkageError e) {
      findings.add(new Finding(function.file(), function.address(), "entry_point " + entryPoint
          + " names no class of the functions module.",
          "use the class name of an entry point in functions/src/main/java (dev.once.functions.*)."));
      return;
    }
    Class<?> needed = event ? CloudEventsFunction.class : HttpFunction.class;
    String trigger = event ? "an event_trigger (CloudEvents)" : "no event_trigger (HTTP)";
    if (!needed.isAssignableFrom(type)) {
      String actual = CloudEventsFunction.class.isAssignableFrom(type) ? "CloudEventsFunction"
          : HttpFunction.class.isAssignableFrom(type) ? "HttpFunction" : "no function interface";
      findings.add(new Finding(function.file(), function.address(), entryPoint + " implements " + actual
          + ", but the function has " + trigger + ", which needs " + needed.getSimpleName() + ".",
          event ? "point entry_point at a CloudEventsFunction, or remove the event_trigger."
              : "point entry_point at an HttpFunction, or add the event_trigger it expects."));
    }
    boolean instantiable = Modifier.isPublic(type.getModifiers()) && !Modifier.isAbstract(type.getModifiers())
        && !type.isInterface();
    try {
      instantiable &= Modifier.isPublic(type.getConstructor().getModifiers());
    } catch (NoSuchMethodException e) {
      instantiable = false;
    }
    if (!instantiable) {
      findings.add(new Finding(function.file(), function.address(), entryPoint
          + " cannot be instantiated by the Functions Framework.",
          "make it a public concrete class with a public no-argument constructor."));
    }
  }
}
