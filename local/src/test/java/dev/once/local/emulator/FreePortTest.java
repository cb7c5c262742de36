package dev.once.local.emulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.local.process.Jvm;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Test JVMs side by side never pick the same port, nor one the kernel hands out to others. */
class FreePortTest {
  private static final int HELD = 20;

  @Test
  void portsAnotherJvmPicked_areReservedUntilItExits() throws Exception {
    Process holder = new ProcessBuilder(Jvm.java(), "-cp", System.getProperty("java.class.path"),
        PortHolder.class.getName(), String.valueOf(HELD)).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    List<Integer> held = new ArrayList<>();
    try {
      BufferedReader lines = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
      for (int i = 0; i < HELD; i++) {
        held.add(Integer.parseInt(lines.readLine().strip()));
      }
      // Picked and not bound: only the reservation keeps this JVM (or any other) from taking them.
      for (int port : held) {
        try (FileChannel reservation = open(port)) {
          assertNull(reservation.tryLock(), port + " reserved by the JVM that picked it");
        }
      }
    } finally {
      holder.getOutputStream().close(); // it exits at the end of its input
      assertTrue(holder.waitFor(30, TimeUnit.SECONDS), "the holder exited");
    }
    try (FileChannel reservation = open(held.get(0)); FileLock lock = reservation.tryLock()) {
      assertNotNull(lock, "free again once the JVM that picked it exited");
    }
  }

  @Test
  void aJvmNeverPicksAPortTwice_norOneOfTheKernelsEphemeralRange() throws IOException {
    // A file of procfs, of no size until read: read as a stream.
    String[] range;
    try (InputStream in = Files.newInputStream(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))) {
      range = new String(in.readAllBytes(), StandardCharsets.US_ASCII).strip().split("\\s+");
    }
    int ephemeral = Integer.parseInt(range[0]);
    Set<Integer> picked = new HashSet<>();
    for (int i = 0; i < 200; i++) {
      int port = FreePort.pick();
      assertTrue(port < ephemeral, port + " is below the kernel's ephemeral ports (" + ephemeral + "-)");
      assertTrue(picked.add(port), port + " picked twice");
    }
    assertEquals(200, picked.size());
  }

  private static FileChannel open(int port) throws IOException {
    return FileChannel.open(FreePort.RESERVATIONS.resolve(String.valueOf(port)), StandardOpenOption.WRITE);
  }

  /** Picks {@code args[0]} ports, prints them one a line, and holds them until its input ends. */
  static final class PortHolder {
    public static void main(String[] args) throws IOException {
      for (int i = 0; i < Integer.parseInt(args[0]); i++) {
        System.out.println(FreePort.pick());
      }
      System.out.flush();
      System.in.transferTo(OutputStream.nullOutputStream());
    }
  }
}
