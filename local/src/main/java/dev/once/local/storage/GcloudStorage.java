package dev.once.local.storage;

import dev.once.local.emulator.CloudSdk;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Google's {@code gcloud storage} CLI pointed at a storage stand-in: the variables that make it talk to the stand-in
 * with no credentials and nothing else on the network ({@link #environment}, what local/README.md tells users and
 * dev/run prints), and a runner for tests. gcloud takes about a second a command: tests keep to a handful.
 */
public final class GcloudStorage {
  /** What one command printed and how it ended. */
  public record Result(List<String> command, int exitCode, String stdout, String stderr) {
    public boolean ok() {
      return exitCode == 0;
    }

    /** This result if the command succeeded, else a failure naming the command and holding its stderr. */
    public Result orThrow() {
      if (!ok()) {
        throw new IllegalStateException(
            String.join(" ", command) + " failed (exit " + exitCode + "): " + stderr.strip());
      }
      return this;
    }

    /**
     * The generation {@code cp --print-created-message} reports for {@code url}: "Created: URL#GENERATION", not
     * always at the start of a line (gcloud's progress dots may come first on a slow upload).
     */
    public long createdGeneration(String url) {
      Matcher m = Pattern.compile(Pattern.quote("Created: " + url + "#") + "(\\d+)").matcher(stderr);
      if (!m.find()) {
        throw new IllegalStateException("no 'Created: " + url + "#…' in: " + stderr);
      }
      return Long.parseLong(m.group(1));
    }
  }

  private final Map<String, String> env;
  private final Duration timeout;

  /** A runner with {@code env} (usually {@link #environment} plus {@code CLOUDSDK_CONFIG}) on top of this JVM's. */
  public GcloudStorage(Map<String, String> env, Duration timeout) {
    this.env = Map.copyOf(env);
    this.timeout = timeout;
  }

  /**
   * The variables for a stand-in at {@code baseUrl} ({@code http://127.0.0.1:PORT}), found by running gcloud with
   * nothing else set: each one is needed, or keeps gcloud from reaching out to the network or waiting for a user.
   */
  public static Map<String, String> environment(String baseUrl, String project) {
    Map<String, String> env = new LinkedHashMap<>();
    // gcloud accepts an endpoint override only as an absolute URL ending in '/'.
    env.put("CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE", baseUrl + "/");
    // No Authorization header; without this gcloud refuses to run ("You do not currently have an active account").
    env.put("CLOUDSDK_AUTH_DISABLE_CREDENTIALS", "true");
    // Bucket commands need a project; unset, gcloud would ask the GCE metadata server for one.
    env.put("CLOUDSDK_CORE_PROJECT", project);
    // Otherwise gcloud asks the GCE metadata server (169.254.169.254) whether it runs on GCE, for its user agent.
    env.put("CLOUDSDK_CORE_CHECK_GCE_METADATA", "false");
    env.put("CLOUDSDK_METRICS_ENVIRONMENT", "once-local");
    env.put("CLOUDSDK_CORE_DISABLE_USAGE_REPORTING", "true");
    env.put("CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK", "true");
    env.put("CLOUDSDK_CORE_DISABLE_PROMPTS", "1");
    return env;
  }

  /** The same variables as one {@code export} line for a shell. */
  public static String exportLine(String baseUrl, String project) {
    StringBuilder line = new StringBuilder("export");
    environment(baseUrl, project).forEach((k, v) -> line.append(' ').append(k).append('=').append(v));
    return line.toString();
  }

  /** {@code gcloud storage ARGS}. */
  public Result run(String... args) {
    return run(null, args);
  }

  /** {@code gcloud storage ARGS} reading {@code stdin} (a streamed upload: {@code cp - gs://…}). */
  public Result run(byte[] stdin, String... args) {
    Path gcloud = CloudSdk.root().resolve("bin/gcloud");
    if (!Files.isExecutable(gcloud)) {
      throw new IllegalStateException("gcloud is missing: no " + gcloud
          + " (install the Google Cloud SDK, or set CLOUDSDK_ROOT)");
    }
    List<String> command = new ArrayList<>(List.of(gcloud.toString(), "storage"));
    command.addAll(List.of(args));
    try {
      Path in = Files.createTempFile("gcloud-in", ".bin");
      Path out = Files.createTempFile("gcloud-out", ".txt");
      Path err = Files.createTempFile("gcloud-err", ".txt");
      try {
        Files.write(in, stdin == null ? new byte[0] : stdin);
        ProcessBuilder builder = new ProcessBuilder(command)
            .redirectInput(in.toFile()).redirectOutput(out.toFile()).redirectError(err.toFile());
        builder.environment().putAll(env);
        Process process = builder.start();
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
          process.destroyForcibly();
          throw new IllegalStateException(String.join(" ", command) + " did not finish within " + timeout);
        }
        return new Result(command, process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
            Files.readString(err, StandardCharsets.UTF_8));
      } finally {
        Files.deleteIfExists(in);
        Files.deleteIfExists(out);
        Files.deleteIfExists(err);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(String.join(" ", command), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(String.join(" ", command) + " was interrupted", e);
    }
  }
}
