package dev.once.local.node;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A directory of scripts a test runs under Node.js with one npm package its users run (Google's Cloud Storage client,
 * a Standard Webhooks library), pinned in its package-lock.json and installed by {@code npm ci} into its
 * node_modules the first time it is missing (terraform/check runs its HCL parser so too). Node.js 18+ and npm are
 * required, on developers' machines and in CI alike: without them the test fails with a line saying so, rather than
 * skipping the client users actually run.
 */
public final class NodeProject {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Path dir;
  private final String pkg;

  /** @param pkg the package package.json pins, whose installed version says whether {@code npm ci} is due */
  public NodeProject(Path dir, String pkg) {
    this.dir = dir.toAbsolutePath().normalize();
    this.pkg = pkg;
  }

  /** Runs {@code node SCRIPT ARGS} with {@code env} added; its stdout, or a failure holding its stderr. */
  public String run(String script, List<String> args, Map<String, String> env, long timeoutSeconds) {
    return run(script, args, env, null, timeoutSeconds);
  }

  /** The same, with {@code stdin} (UTF-8) as the script's standard input. */
  public synchronized String run(String script, List<String> args, Map<String, String> env, String stdin,
      long timeoutSeconds) {
    ensureInstalled();
    List<String> command = new ArrayList<>(List.of("node", dir.resolve(script).toString()));
    command.addAll(args);
    return exec(command, env, stdin, timeoutSeconds, "node " + script);
  }

  private void ensureInstalled() {
    exec(List.of("node", "--version"), Map.of(), null, 60, "node --version (install Node.js 18+ with npm)");
    if (installedVersion().equals(pinnedVersion())) {
      return;
    }
    exec(List.of("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"), Map.of(), null, 600,
        "npm ci in " + dir + " (installs " + pkg + " " + pinnedVersion() + " from package-lock.json)");
    if (!installedVersion().equals(pinnedVersion())) {
      throw new IllegalStateException("npm ci in " + dir + " did not install " + pkg + " " + pinnedVersion());
    }
  }

  private String pinnedVersion() {
    return readJson(dir.resolve("package.json")).path("dependencies").path(pkg).asText();
  }

  private String installedVersion() {
    Path installed = dir.resolve("node_modules").resolve(pkg).resolve("package.json");
    return Files.isRegularFile(installed) ? readJson(installed).path("version").asText() : "";
  }

  private static JsonNode readJson(Path file) {
    try {
      return JSON.readTree(file.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException("reading " + file, e);
    }
  }

  private String exec(List<String> command, Map<String, String> env, String stdin, long timeoutSeconds, String what) {
    try {
      Path out = Files.createTempFile("node-out", ".txt");
      Path err = Files.createTempFile("node-err", ".txt");
      try {
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile())
            .redirectOutput(out.toFile()).redirectError(err.toFile());
        if (stdin == null) {
          builder.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        }
        builder.environment().putAll(env);
        Process process;
        try {
          process = builder.start();
        } catch (IOException e) {
          throw new IllegalStateException(what + ": could not start " + command.get(0)
              + " (Node.js 18+ and npm must be on PATH, e.g. apt-get install nodejs npm)", e);
        }
        if (stdin != null) {
          try (var in = process.getOutputStream()) {
            in.write(stdin.getBytes(StandardCharsets.UTF_8));
          }
        }
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          throw new IllegalStateException(what + " did not finish within " + timeoutSeconds + " s");
        }
        if (process.exitValue() != 0) {
          throw new IllegalStateException(what + " failed (exit " + process.exitValue() + "): "
              + Files.readString(err, StandardCharsets.UTF_8).strip());
        }
        return Files.readString(out, StandardCharsets.UTF_8);
      } finally {
        Files.deleteIfExists(out);
        Files.deleteIfExists(err);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(what, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(what + " was interrupted", e);
    }
  }
}
