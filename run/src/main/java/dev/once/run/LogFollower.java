package dev.once.run;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Follows the parts' log files and hands out one readable line per thing worth seeing, prefixed with the time it
 * was read and the part's name. Polls (every 200 ms): the parts write to plain files, which is what keeps their
 * full output for later reading.
 */
final class LogFollower implements AutoCloseable {
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss");
  private static final long POLL_MILLIS = 200;

  private final Consumer<String> out;
  private final List<Source> sources = new CopyOnWriteArrayList<>();
  private final Thread thread;
  private volatile boolean running = true;

  private static final class Source {
    final String name;
    final Path file;
    final LogRenderer renderer;
    final ByteArrayOutputStream partial = new ByteArrayOutputStream();
    long position;

    Source(String name, Path file, boolean function) {
      this.name = name;
      this.file = file;
      this.renderer = new LogRenderer(function);
    }
  }

  LogFollower(Consumer<String> out) {
    this.out = out;
    this.thread = new Thread(this::loop, "log-follower");
    this.thread.setDaemon(true);
    this.thread.start();
  }

  /** Follows {@code file} from its beginning (each run starts with empty logs). */
  void follow(String name, Path file, boolean function) {
    sources.add(new Source(name, file, function));
  }

  private void loop() {
    while (running) {
      drain();
      try {
        Thread.sleep(POLL_MILLIS);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private synchronized void drain() {
    for (Source source : sources) {
      read(source);
    }
  }

  private void read(Source source) {
    if (!Files.exists(source.file)) {
      return;
    }
    try (SeekableByteChannel channel = Files.newByteChannel(source.file)) {
      if (channel.size() < source.position) {
        source.position = 0; // truncated: a new file
      }
      channel.position(source.position);
      ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
      int n;
      while ((n = channel.read(buffer)) > 0) {
        source.position += n;
        buffer.flip();
        while (buffer.hasRemaining()) {
          byte b = buffer.get();
          if (b == '\n') {
            emit(source, source.partial.toString(StandardCharsets.UTF_8));
            source.partial.reset();
          } else {
            source.partial.write(b);
          }
        }
        buffer.clear();
      }
    } catch (IOException e) {
      // the file is being replaced; the next poll reads it
    }
  }

  private void emit(Source source, String line) {
    Optional<String> text = source.renderer.render(line);
    text.ifPresent(t -> out.accept(String.format("%s  %-22s %s", LocalTime.now().format(TIME), source.name, t)));
  }

  /** Reads what is left, then stops. */
  @Override
  public void close() {
    running = false;
    thread.interrupt();
    try {
      thread.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    drain();
  }
}
