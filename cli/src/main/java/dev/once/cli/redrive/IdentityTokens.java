package dev.once.cli.redrive;

import dev.once.cli.Failure;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * An identity token from the Google Cloud CLI ({@code gcloud auth print-identity-token}) for calling a private
 * function: Cloud Run checks it against the roles/run.invoker grants. Read from gcloud's output, never passed on a
 * command line where other users could see it.
 */
final class IdentityTokens {
  private static final long TIMEOUT_SECONDS = 30;

  private IdentityTokens() {}

  static String fromGcloud() {
    ProcessBuilder builder = new ProcessBuilder("gcloud", "auth", "print-identity-token").redirectErrorStream(false);
    Process process;
    try {
      process = builder.start();
    } catch (IOException e) {
      throw Failure.remote("could not run gcloud for an identity token (is the Google Cloud CLI installed and on"
          + " PATH?): " + Failure.reason(e), e);
    }
    try {
      process.getOutputStream().close();
      if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw Failure.remote("gcloud auth print-identity-token did not finish within " + TIMEOUT_SECONDS + " s", null);
      }
      String token = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      if (process.exitValue() != 0 || token.isEmpty()) {
        String error = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        throw Failure.remote("gcloud auth print-identity-token failed: " + Failure.reason(new IOException(error)), null);
      }
      return token;
    } catch (IOException e) {
      throw Failure.remote("could not read gcloud's identity token: " + Failure.reason(e), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
      throw Failure.remote("interrupted while waiting for gcloud", e);
    }
  }
}
