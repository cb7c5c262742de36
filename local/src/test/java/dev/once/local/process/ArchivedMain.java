package dev.once.local.process;

/** A JVM for {@link JvmClassArchiveTest}: says it is ready, then waits to be stopped. */
public final class ArchivedMain {
  private ArchivedMain() {}

  public static void main(String[] args) throws InterruptedException {
    System.out.println("ready");
    System.out.flush();
    Thread.sleep(60_000);
  }
}
