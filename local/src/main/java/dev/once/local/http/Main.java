package dev.once.local.http;

import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;

/**
 * The shared shape of every stand-in's {@code main}: parse options, start, print one {@code READY <url>} line
 * the local runner waits for, and run until the process is stopped.
 */
public final class Main {
  private Main() {}

  public static void run(String name, String[] args, Set<String> options, String usage,
      Function<Cli, StandIn> start) {
    Cli cli;
    try {
      cli = Cli.parse(args, options);
    } catch (IllegalArgumentException e) {
      System.err.println(name + ": " + e.getMessage());
      System.err.println(usage);
      System.exit(2);
      return;
    }
    if (cli.has("help")) {
      System.out.println(usage);
      return;
    }
    StandIn running;
    try {
      running = start.apply(cli);
    } catch (IllegalArgumentException e) {
      System.err.println(name + ": " + e.getMessage());
      System.exit(2);
      return;
    }
    System.out.println("READY " + name + " " + running.baseUrl());
    System.out.flush();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      running.close();
      stopped.countDown();
    }, name + "-stop"));
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
