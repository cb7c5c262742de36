package dev.once.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** Runs a list of operations on a fixed number of threads, released together, and reports operations/s. */
final class Throughput {
  private Throughput() {}

  record Result(String name, int operations, long nanos) {
    double perSecond() {
      return operations / (nanos / 1e9);
    }
  }

  static Result measure(String name, int threads, List<Runnable> operations) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> done = new ArrayList<>(operations.size());
      for (Runnable operation : operations) {
        done.add(pool.submit(() -> {
          start.await();
          operation.run();
          return null;
        }));
      }
      long begin = System.nanoTime();
      start.countDown();
      for (Future<?> future : done) {
        future.get(10, TimeUnit.MINUTES);
      }
      return new Result(name, operations.size(), System.nanoTime() - begin);
    } finally {
      pool.shutdownNow();
    }
  }
}
