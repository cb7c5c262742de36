package dev.once.bench;

import dev.once.local.emulator.FreePort;
import dev.once.local.eventarc.BinaryMode;
import dev.once.local.eventarc.CloudEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One invoker process timed from its start: when its port first accepts a connection (the invoker binds it only
 * after loading the function class) and when its first event is answered. {@code FunctionProcess} polls every
 * 50 ms, too coarse to time a start; this polls every 2 ms.
 */
final class InvokerLaunch implements AutoCloseable {
  private static final Duration START_DEADLINE = Duration.ofSeconds(120);
  private static final HttpClient HTTP = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5))
      .build();

  /** Milliseconds from process start to the port listening and to the first event's 2xx answer. */
  record Timing(double listenMs, double answeredMs) {}

  private final Process process;
  private final int port;
  private final Path log;
  private final long startedNanos;

  private InvokerLaunch(Process process, int port, Path log, long startedNanos) {
    this.process = process;
    this.port = port;
    this.log = log;
    this.startedNanos = startedNanos;
  }

  static InvokerLaunch start(Path functionJar, String target, List<String> jvmArgs, Map<String, String> env, Path log) {
    int port = FreePort.pick();
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmArgs);
    command.addAll(List.of("-jar", Artifacts.invokerJar().toString(), "--classpath", functionJar.toString(),
        "--target", target, "--port", String.valueOf(port)));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.to(log.toFile()));
    builder.environment().putAll(env);
    long started = System.nanoTime();
    try {
      return new InvokerLaunch(builder.start(), port, log, started);
    } catch (IOException e) {
      throw new UncheckedIOException("could not start the invoker for " + target, e);
    }
  }

  /** Waits for the port, then sends {@code event}; anything but a 2xx answer fails the benchmark. */
  Timing firstEvent(CloudEvent event) {
    long deadline = startedNanos + START_DEADLINE.toNanos();
    while (!accepts()) {
      if (!process.isAlive() || System.nanoTime() > deadline) {
        throw new IllegalStateException("the invoker did not listen on " + port + "; see " + log);
      }
      LockSupport.parkNanos(Duration.ofMillis(2).toNanos());
    }
    double listenMs = (System.nanoTime() - startedNanos) / 1e6;
    HttpRequest request = BinaryMode.request(event, URI.create("http://127.0.0.1:" + port + "/"), Duration.ofSeconds(120));
    try {
      HttpResponse<String> answer = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
      if (answer.statusCode() / 100 != 2) {
        throw new IllegalStateException("the first event was answered " + answer.statusCode() + "; see " + log);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("the first event got no answer; see " + log, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    return new Timing(listenMs, (System.nanoTime() - startedNanos) / 1e6);
  }

  private boolean accepts() {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      return true;
    } catch (ConnectException refused) {
      return false;
    } catch (IOException e) {
      return false;
    }
  }

  long pid() {
    return process.pid();
  }

  /** The function's own latency of its first event, from its log line ({@code latencyMs}), if it logged one. */
  Long loggedLatencyMs() {
    try {
      for (String line : Files.readAllLines(log)) {
        int at = line.indexOf("\"latencyMs\":");
        if (at >= 0) {
          String rest = line.substring(at + "\"latencyMs\":".length());
          return Long.parseLong(rest.substring(0, rest.indexOf(',')).strip());
        }
      }
      return null;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
