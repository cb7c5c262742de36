package dev.once.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.local.process.Jvm;
import dev.once.local.stack.Part;
import dev.once.local.stack.Ports;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One dev/run per log directory, and the clear lines a real machine needs: a second runner while one is alive, a
 * stale lock, a port another program holds. None of these starts a process.
 */
class RunLockTest {
  @TempDir
  Path logDir;

  private static long livePidThatIsNotUs() {
    // The JVM that launched this test JVM (Maven) is alive for as long as the test runs.
    return ProcessHandle.current().parent().orElseThrow().pid();
  }

  private static long deadPid() throws Exception {
    Process process = new ProcessBuilder(Jvm.java(), "-version")
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    process.waitFor();
    return process.pid();
  }

  private StackInfo holder(long pid, List<Long> children) {
    return StackInfo.of(RunConfig.of(Mode.SYNC, Ports.defaults(), logDir), pid, children);
  }

  private void lockHeldBy(long pid, List<Long> children) {
    holder(pid, children).writeTo(RunLock.file(logDir));
  }

  @Test
  void aLiveHolder_keepsTheLock() {
    long other = livePidThatIsNotUs();
    lockHeldBy(other, List.of());
    RunLock.AlreadyRunning e = assertThrows(RunLock.AlreadyRunning.class,
        () -> RunLock.acquire(logDir, holder(ProcessHandle.current().pid(), List.of())));
    assertEquals(other, e.pid());
    assertTrue(e.getMessage().contains("kill " + other), e.getMessage());
  }

  @Test
  void aDeadHoldersLock_isStale_andTakenOver_thenRemovedOnClose() throws Exception {
    lockHeldBy(deadPid(), List.of(livePidThatIsNotUs()));
    RunLock.Acquired acquired = RunLock.acquire(logDir, holder(ProcessHandle.current().pid(), List.of()));
    assertEquals(ProcessHandle.current().pid(), StackInfo.read(RunLock.file(logDir)).orElseThrow().pid());
    assertEquals(List.of(livePidThatIsNotUs()), acquired.leftovers(), "its children that still live are named");
    acquired.lock().close();
    assertFalse(Files.exists(RunLock.file(logDir)));
  }

  private record Result(int status, String out, String err) {}

  private Result runner(Map<String, String> env) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = LocalPipeline.run(new String[] {"--log-dir", logDir.toString()}, env,
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), false);
    return new Result(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static Set<Long> children() {
    return ProcessHandle.current().children().map(ProcessHandle::pid).collect(Collectors.toSet());
  }

  @Test
  void aSecondRunner_saysTheFirstIsRunning_insteadOfFailingOnAPort() {
    long other = livePidThatIsNotUs();
    lockHeldBy(other, List.of());
    Set<Long> before = children();

    Result result = runner(Ports.free().asEnvironment());

    assertEquals(LocalPipeline.FAILED, result.status());
    assertTrue(result.err().contains("already running here (pid " + other + ","), result.err());
    assertFalse(result.err().contains("port"), result.err());
    assertEquals(other, StackInfo.read(RunLock.file(logDir)).orElseThrow().pid(), "the live runner's lock stays");
    assertEquals(before, children(), "nothing was started");
  }

  @Test
  void aTakenPort_isOneClearLine_namingItsVariable_evenPastAStaleLock() throws Exception {
    lockHeldBy(deadPid(), List.of());
    Ports ports = Ports.free();
    Map<String, String> env = new HashMap<>(ports.asEnvironment());
    Set<Long> before = children();
    try (ServerSocket squatter = new ServerSocket(ports.of(Part.STORAGE), 1, InetAddress.getLoopbackAddress())) {
      Result result = runner(env);

      assertEquals(LocalPipeline.FAILED, result.status());
      assertTrue(result.err().contains("port " + ports.of(Part.STORAGE) + " (Cloud Storage stand-in) is in use by"
          + " another program: stop it, or set ONCE_STORAGE_PORT to a free port"), result.err());
      assertEquals(1, result.err().lines().count(), "one line: " + result.err());
    }
    assertEquals(before, children(), "nothing was started");
    assertFalse(Files.exists(RunLock.file(logDir)), "the stale lock was taken over, then released");
  }
}
