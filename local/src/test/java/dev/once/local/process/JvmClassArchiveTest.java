package dev.once.local.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.local.Await;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A JVM stopped cleanly leaves its class archive; the next maps it as it is; a killed one leaves none. */
class JvmClassArchiveTest {
  @TempDir
  static Path jarDir;
  private static List<String> mainClass;
  @TempDir
  Path dir;

  /** The main class in a jar: CDS archives classes from jars only, never from a directory. */
  @BeforeAll
  static void jar() throws IOException {
    Path jar = jarDir.resolve("main.jar");
    String entry = ArchivedMain.class.getName().replace('.', '/') + ".class";
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
        InputStream in = ArchivedMain.class.getClassLoader().getResourceAsStream(entry)) {
      out.putNextEntry(new JarEntry(entry));
      in.transferTo(out);
    }
    mainClass = List.of("-cp", jar.toString(), ArchivedMain.class.getName());
  }

  @Test
  void theArchive_isNamedByTheCommand_butNotByItsProperties() {
    List<String> plain = Jvm.classArchive(dir, "main", mainClass);
    List<String> withProperty = new ArrayList<>(List.of("-Donce.crash.at=somewhere"));
    withProperty.addAll(mainClass);
    assertEquals(plain, Jvm.classArchive(dir, "main", withProperty));
    assertNotEquals(plain, Jvm.classArchive(dir, "main", List.of("-cp", "elsewhere", ArchivedMain.class.getName())));
    assertNotEquals(plain, Jvm.classArchive(dir, "other", mainClass));
  }

  @Test
  void aCleanStop_writesTheArchive_whichTheNextJvmMapsWithoutWritingItAgain() throws IOException {
    Path archive = archive(Jvm.classArchive(dir, "main", mainClass));
    run("first", false);
    assertTrue(Files.size(archive) > 0, "written at the first stop: " + archive);
    FileTime written = Files.getLastModifiedTime(archive);
    run("second", false);
    assertEquals(written, Files.getLastModifiedTime(archive), "mapped, not written again");
    assertFalse(Files.readString(dir.resolve("second.log")).contains("cds"), "no archive messages in the log");
  }

  @Test
  void aKilledJvm_writesNone() {
    Path archive = archive(Jvm.classArchive(dir, "main", mainClass));
    run("killed", true);
    assertFalse(Files.exists(archive), "nothing written by a JVM killed with SIGKILL");
  }

  private void run(String name, boolean kill) {
    List<String> command = new ArrayList<>(List.of(Jvm.java()));
    command.addAll(Jvm.classArchive(dir, "main", mainClass));
    command.addAll(mainClass);
    Path log = dir.resolve(name + ".log");
    ChildProcess process = ChildProcess.start(name, command, Map.of(), log);
    Await.until(Duration.ofSeconds(30), () -> read(log).contains("ready"), name + " to be ready");
    if (kill) {
      process.kill();
    } else {
      process.close();
    }
  }

  private static Path archive(List<String> flags) {
    return Path.of(flags.getFirst().substring("-XX:SharedArchiveFile=".length()));
  }

  private static String read(Path log) {
    try {
      return Files.exists(log) ? Files.readString(log) : "";
    } catch (IOException e) {
      return "";
    }
  }
}
