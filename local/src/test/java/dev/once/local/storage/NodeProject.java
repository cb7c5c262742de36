package dev.once.local.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
 * {@code src/test/node}: Google's Node.js Cloud Storage client, pinned in its package-lock.json and installed by
 * {@code npm ci} into its node_modules the first time it is missing (as terraform/check installs its HCL parser).
 * Node.js 18+ and npm are required, on developers' machines and in CI alike: without them the test fails with a
 * line saying so, rather than skipping the client users actually run.
 */
final class NodeProject {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String PACKAGE = "@google-cloud/storage";

  private final Path dir;

  NodeProject(Path dir) {
    this.dir = dir.toAbsolutePath().normalize();
  }

  /** Runs {@code node SCRIPT ARGS} with {@code env} added; its stdout, or a failure holding its stderr. */
  synchronized String run(String script, List<String> args, Map<String, String> env, long timeoutSeconds) {
    ensureInstalled();
    List<String> command = new ArrayList<>(List.of("node", dir.resolve(script).toString()));
    command.addAll(args);
    return exec(command, env, timeoutSeconds, "node " + script);
  }

  private void ensureInstalled() {
    exec(List.of("node", "--version"), Map.of(), 60, "node --version (install Node.js 18+ with npm)");
    if (installedVersion().equals(pinnedVersion())) {
      return;
    }
    exec(List.of("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"), Map.of(), 600,
        "npm ci in " + dir + " (installs " + PACKAGE + " " + pinnedVersion() + " from package-lock.json)");
    if (!installedVersion().equals(pinnedVersion())) {
      throw new IllegalStateException("npm ci in " + dir + " did not install " + PACKAGE + " " + pinnedVersion());
    }
  }

  private String pinnedVersion() {
    return readJson(dir.resolve("package.json")).path("dependencies").path(PACKAGE).asText();
  }

  private String installedVersion() {
    Path installed = dir.resolve("node_modules").resolve(PACKAGE).resolve("package.json");
    return Files.isRegularFile(installed) ? readJson(installed).path("version").asText() : "";
  }

  private static JsonNode readJson(Path file) {
    try {
      return JSON.readTree(file.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException("reading " + file, e);
    }
  }

  private String exec(List<String> command, Map<String, String> env, long timeoutSeconds, String what) {
    try {
      Path out = Files.createTempFile("node-out", ".txt");
      Path err = Files.createTempFile("node-err", ".txt");
      try {
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile())
            .redirectOutput(out.toFile()).redirectError(err.toFile());
        builder.environment().putAll(env);
        Process process;
        try {
          process = builder.start();
        } catch (IOException e) {
          throw new IllegalStateException(what + ": could not start " + command.get(0)
              + " (Node.js 18+ and npm must be on PATH, e.g. apt-get install nodejs npm)", e);
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
