package dev.once.run;

import dev.once.local.emulator.CloudSdk;
import dev.once.local.emulator.FreePort;
import dev.once.local.stack.FunctionJars;
import dev.once.local.stack.Part;
import java.util.ArrayList;
import java.util.List;

/**
 * What must hold before anything starts, each failure as one clear line: the Cloud SDK's emulators are installed,
 * the functions are built, and every port is free.
 */
final class Preflight {
  private Preflight() {}

  /** Problems, one line each; empty when the stack can start. */
  static List<String> problems(RunConfig config, FunctionJars jars, List<Long> leftovers) {
    List<String> problems = new ArrayList<>();
    try {
      CloudSdk.firestoreJar();
      CloudSdk.pubSubJar();
    } catch (IllegalStateException e) {
      problems.add(e.getMessage());
    }
    try {
      jars.check();
    } catch (IllegalStateException e) {
      problems.add(e.getMessage());
    }
    problems.addAll(takenPorts(config, leftovers));
    return problems;
  }

  static List<String> takenPorts(RunConfig config, List<Long> leftovers) {
    List<String> taken = new ArrayList<>();
    for (Part part : Part.values()) {
      if (part == Part.GEMINI && config.realGemini()) {
        continue;
      }
      int port = config.ports().of(part);
      if (!FreePort.isFree(port)) {
        taken.add("port " + port + " (" + part.title() + ") is in use by another program: stop it, or set "
            + part.portVariable() + " to a free port");
      }
    }
    if (!taken.isEmpty() && !leftovers.isEmpty()) {
      taken.add("a dev/run that was killed left processes behind, which may hold these ports: kill "
          + String.join(" ", leftovers.stream().map(String::valueOf).toList()));
    }
    return taken;
  }
}
