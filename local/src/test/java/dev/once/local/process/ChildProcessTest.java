package dev.once.local.process;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills and stops return as soon as the process is gone, even while a test waits on CompletableFuture's default
 * executor (on 2 cores, one thread), through which the JDK completes {@code Process.onExit()}.
 */
class ChildProcessTest {
  private static final Duration PROMPT = Duration.ofSeconds(5);
  private final CountDownLatch release = new CountDownLatch(1);
  @TempDir
  Path logs;

  @BeforeEach
  void occupyTheDefaultExecutor() {
    IntStream.range(0, Math.max(1, ForkJoinPool.getCommonPoolParallelism()))
        .forEach(i -> CompletableFuture.runAsync(() -> {
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }));
  }

  @AfterEach
  void releaseIt() {
    release.countDown();
  }

  @Test
  void aKill_returnsOnceTheProcessIsGone() {
    ChildProcess sleeper = ChildProcess.start("sleeper", List.of("sleep", "60"), Map.of(), logs.resolve("kill.log"));
    long started = System.nanoTime();
    sleeper.kill();
    assertFalse(sleeper.isAlive());
    assertTrue(Duration.ofNanos(System.nanoTime() - started).compareTo(PROMPT) < 0, "killed within " + PROMPT);
  }

  @Test
  void aStop_returnsOnceTheProcessIsGone() {
    ChildProcess sleeper = ChildProcess.start("sleeper", List.of("sleep", "60"), Map.of(), logs.resolve("stop.log"));
    long started = System.nanoTime();
    sleeper.close();
    assertFalse(sleeper.isAlive());
    assertTrue(Duration.ofNanos(System.nanoTime() - started).compareTo(PROMPT) < 0, "stopped within " + PROMPT);
  }

  @Test
  void aStopOfAHandle_returnsOnceTheProcessIsGone() {
    ChildProcess sleeper = ChildProcess.start("sleeper", List.of("sleep", "60"), Map.of(), logs.resolve("handle.log"));
    long started = System.nanoTime();
    ChildProcess.stop(ProcessHandle.of(sleeper.pid()).orElseThrow());
    assertFalse(sleeper.isAlive());
    assertTrue(Duration.ofNanos(System.nanoTime() - started).compareTo(PROMPT) < 0, "stopped within " + PROMPT);
  }
}
