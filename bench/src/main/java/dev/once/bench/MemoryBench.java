package dev.once.bench;

import dev.once.local.eventarc.DirectSender;
import dev.once.local.http.RetryPolicy;
import dev.once.local.invoker.FunctionProcess;
import dev.once.local.samples.InvoicePdf;
import dev.once.wire.eventarc.CloudEvent;
import dev.once.wire.storage.ObjectFinalized;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * dev/bench memory (issue 7, "cost per event: resident memory"): one DocumentUploaded instance takes 10,000 events
 * (250 documents, each delivered 40 times: mostly duplicates, some first deliveries), four at a time as deployed;
 * then its resident set (VmRSS) and peak (VmHWM) are read from /proc. Twice: with the JVM's defaults on this
 * machine (no -Xmx), and sized as in a 512 MiB container, which the target (fits a 512 MiB instance) is judged
 * on; the first shows what a JVM that believes it has this machine's memory does, and the live heap after a full
 * collection shows what the instance really holds.
 */
public final class MemoryBench {
  private static final long MIB = 1024 * 1024;
  private static final long INSTANCE_BYTES = 512 * MIB;
  private static final int DOCUMENTS = 250;

  private record Variant(String name, List<String> jvm) {}

  public static void main(String[] args) throws Exception {
    int events = 10_000;
    if (args.length == 2 && args[0].equals("--events")) {
      events = Integer.parseInt(args[1]);
    } else if (args.length != 0) {
      throw new IllegalArgumentException("usage: dev/bench memory [--events N]");
    }
    List<Variant> variants = List.of(
        new Variant("JVM defaults (no -Xmx; " + Runtime.getRuntime().availableProcessors() + " cores, "
            + totalMemoryGiB() + " GiB RAM here)", List.of()),
        // What the JVM sees inside a 512 MiB container: a quarter of it as the maximum heap, and the serial GC.
        new Variant("512 MiB container sizing (-XX:MaxRAM=512m)", List.of("-XX:MaxRAM=512m")));
    System.out.printf("resident memory of one DocumentUploaded instance after %,d events (%d documents x %d"
        + " deliveries, shuffled, 4 at a time)%n", events, DOCUMENTS, events / DOCUMENTS);
    boolean fits;
    try (BenchStack stack = BenchStack.start()) {
      measure(stack, variants.get(0), events, 1);
      fits = measure(stack, variants.get(1), events, 2);
    }
    System.out.printf("%nfits a 512 MiB instance (peak resident set sized as in one <= 512 MiB): %s%n",
        fits ? "yes" : "NO");
    System.out.println("(with the JVM's defaults the heap may grow to a quarter of this machine's memory, so that"
        + " resident set shows how long garbage is kept, not what an instance needs: see the live heap)");
  }

  private static boolean measure(BenchStack stack, Variant variant, int events, int run) throws Exception {
    int copies = Math.max(1, events / DOCUMENTS);
    List<CloudEvent> deliveries = new ArrayList<>();
    for (int d = 0; d < DOCUMENTS; d++) {
      ObjectFinalized first =
          stack.upload("memory-" + run + "/invoice-" + d + ".pdf", InvoicePdf.of("M-" + run + "-" + d));
      deliveries.add(DirectSender.finalized(first));
      for (int c = 1; c < copies; c++) {
        deliveries
            .add(DirectSender.finalized(stack.storage().renotify(first.bucket(), first.name(), first.generation())));
      }
    }
    Collections.shuffle(deliveries, new Random(run));
    try (FunctionProcess instance = stack.startDocumentUploaded(variant.jvm(), "memory-" + run + ".log")) {
      long startRss = status(instance.pid(), "VmRSS");
      DirectSender.Report report = new DirectSender(List.of(instance.url()), 4,
          RetryPolicy.defaults().withBackoff(Duration.ofMillis(20), Duration.ofMillis(500)).withMaxAttempts(100),
          Duration.ofSeconds(60)).send(deliveries);
      if (!report.gaveUp().isEmpty()) {
        throw new IllegalStateException(report.gaveUp().size() + " events were never acknowledged, e.g. "
            + report.gaveUp().get(0));
      }
      long rss = status(instance.pid(), "VmRSS");
      long peak = status(instance.pid(), "VmHWM");
      boolean fits = peak <= INSTANCE_BYTES;
      System.out.printf("  %-52s idle after start %4d MiB; after %,d events: resident %4d MiB, peak %4d MiB,"
          + " live heap after a full GC %s -> %s%n", variant.name(), startRss / MIB, deliveries.size(), rss / MIB,
          peak / MIB, liveHeap(instance.pid()), fits ? "fits 512 MiB" : "over 512 MiB");
      return fits;
    }
  }

  /** The heap in use after a full collection, from the JDK's jcmd (GC.run, then GC.heap_info). */
  private static String liveHeap(long pid) throws InterruptedException {
    String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
    try {
      run(jcmd, Long.toString(pid), "GC.run");
      // A line per generation ("DefNew total NK, used NK", "Tenured ...") or for the whole heap ("garbage-first
      // heap total reserved NK, committed NK, used NK"); their sub-spaces say "N% used" and Metaspace has no total.
      Matcher used = Pattern.compile("(?m)^\\S.*total .*\\bused (\\d+)K")
          .matcher(run(jcmd, Long.toString(pid), "GC.heap_info"));
      long kib = 0;
      boolean found = false;
      while (used.find()) {
        kib += Long.parseLong(used.group(1));
        found = true;
      }
      return found ? (kib / 1024) + " MiB" : "unknown";
    } catch (IOException e) {
      return "unknown (" + e.getMessage() + ")";
    }
  }

  private static String run(String... command) throws IOException, InterruptedException {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    byte[] out = process.getInputStream().readAllBytes();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IOException(String.join(" ", command) + " did not finish");
    }
    return new String(out, StandardCharsets.UTF_8);
  }

  /** A size line of /proc/PID/status ("VmRSS:  123456 kB"), in bytes. */
  private static long status(long pid, String field) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (line.startsWith(field + ":")) {
          return Long.parseLong(line.substring(field.length() + 1).replace("kB", "").strip()) * 1024;
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read /proc/" + pid + "/status (Linux only)", e);
    }
    throw new IllegalStateException("/proc/" + pid + "/status has no " + field);
  }

  private static long totalMemoryGiB() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (line.startsWith("MemTotal:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) / (1024 * 1024);
        }
      }
    } catch (IOException e) {
      // reported as 0 below
    }
    return 0;
  }
}
