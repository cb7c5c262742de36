package dev.once.local.emulator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * One emulator JVM started from the Cloud SDK's jar on 127.0.0.1, its output sent to a log file (the
 * Firestore emulator prints a stack trace per aborted transaction), ready once its root URL answers.
 */
final class EmulatorProcess {
  private static final Duration START_DEADLINE = Duration.ofSeconds(90);
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private final String name;
  private final int port;
  private final Path log;
  private final Process process;

  private EmulatorProcess(String name, int port, Path log, Process process) {
    this.name = name;
    this.port = port;
    this.log = log;
    this.process = process;
  }

  static EmulatorProcess start(String name, List<String> javaArgs, int port, Path log) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Duser.language=en");
    command.add("-Xss1m");
    command.addAll(javaArgs);
    try {
      Files.createDirectories(log.toAbsolutePath().getParent());
      Process process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
              .start();
      EmulatorProcess emulator = new EmulatorProcess(name, port, log, process);
      Runtime.getRuntime().addShutdownHook(new Thread(emulator::stop, name + "-stop"));
      emulator.awaitReady();
      return emulator;
    } catch (IOException e) {
      throw new UncheckedIOException("could not start the " + name + " emulator", e);
    }
  }

  private void awaitReady() {
    Instant deadline = Instant.now().plus(START_DEADLINE);
    HttpRequest ping =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/"))
            .timeout(Duration.ofSeconds(2))
            .build();
    while (Instant.now().isBefore(deadline)) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "the " + name + " emulator exited with " + process.exitValue() + " before it was ready; see " + log);
      }
      try {
        if (HTTP.send(ping, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return;
        }
      } catch (IOException e) {
        // not listening yet
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for the " + name + " emulator", e);
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for the " + name + " emulator", e);
      }
    }
    stop();
    throw new IllegalStateException(
        "the " + name + " emulator did not answer on port " + port + " within " + START_DEADLINE + "; see " + log);
  }

  int port() {
    return port;
  }

  Path log() {
    return log;
  }

  boolean isAlive() {
    return process.isAlive();
  }

  long pid() {
    return process.pid();
  }

  void stop() {
    if (!process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }
}
