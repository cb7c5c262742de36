package dev.once.bench;

import dev.once.local.emulator.FreePort;
import dev.once.local.eventarc.BinaryMode;
import dev.once.local.invoker.FunctionProcess;
import dev.once.local.process.ChildProcess;
import dev.once.wire.eventarc.CloudEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * One invoker process timed from its start: when its port first accepts a connection (the invoker binds it only
 * after loading the function class) and when its first event is answered. Polls every 2 ms: finer than
 * {@link FunctionProcess#start}, whose 50 ms would blur a start.
 */
final class InvokerLaunch implements AutoCloseable {
  private static final Duration START_DEADLINE = Duration.ofSeconds(120);
  private static final HttpClient HTTP = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5))
      .build();

  /** Milliseconds from process start to the port listening and to the first event's 2xx answer. */
  record Timing(double listenMs, double answeredMs) {}

  private final FunctionProcess process;
  private final long startedNanos;

  private InvokerLaunch(FunctionProcess process, long startedNanos) {
    this.process = process;
    this.startedNanos = startedNanos;
  }

  static InvokerLaunch start(List<Path> classpath, String target, List<String> jvmArgs, Map<String, String> env,
      Path log) {
    try {
      Files.deleteIfExists(log); // the first event's latency is read from this log: none of an earlier run's
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    long started = System.nanoTime();
    FunctionProcess process = FunctionProcess.launch(
        new FunctionProcess.Launch(Artifacts.invokerJar(), classpath.getLast(), jvmArgs,
            classpath.subList(0, classpath.size() - 1)),
        target, FreePort.pick(), env, log);
    return new InvokerLaunch(process, started);
  }

  /** Waits for the port, then sends {@code event}; anything but a 2xx answer fails the benchmark. */
  Timing firstEvent(CloudEvent event) {
    process.process().awaitReady(() -> ChildProcess.listening(process.port()), START_DEADLINE, Duration.ofMillis(2));
    double listenMs = (System.nanoTime() - startedNanos) / 1e6;
    HttpRequest request = BinaryMode.request(event, process.url(), Duration.ofSeconds(120));
    try {
      HttpResponse<String> answer = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
      if (answer.statusCode() / 100 != 2) {
        throw new IllegalStateException(
            "the first event was answered " + answer.statusCode() + "; see " + process.log());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("the first event got no answer; see " + process.log(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    return new Timing(listenMs, (System.nanoTime() - startedNanos) / 1e6);
  }

  /** The function's own latency of its first event, from its log line ({@code latencyMs}), if it logged one. */
  Long loggedLatencyMs() {
    try {
      for (String line : Files.readAllLines(process.log())) {
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
    process.kill();
  }
}
