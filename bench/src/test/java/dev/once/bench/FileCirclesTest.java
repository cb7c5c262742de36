package dev.once.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** No circle between the library's source files: the layers run one way ({@link FileCircles}). */
class FileCirclesTest {
  @Test
  void noSourceFileOfTheLibrary_isInACircle() throws IOException {
    for (String module : ApiSurfaceTest.LIBRARY) { // none across them: once-firestore builds on once-core
      assertEquals(List.of(), FileCircles.circles(Path.of(module, "src/main/java")), module);
    }
  }

  /** The circles issue 29 found, rebuilt: each reported; a javadoc link or a string names nothing. */
  @Test
  void anInterfaceNamingItsImplementation_andAnInternalClassNamingItsWrapper_areCircles(@TempDir Path tree)
      throws IOException {
    SourceTree.write(tree, "dev/once/ledger/Ledger.java", """
        package dev.once.ledger;
        import dev.once.firestore.FirestoreLedger;
        /** See {@link Wrapper}; "Memory" is only a word here. */
        public interface Ledger { static Ledger deployed() { return new FirestoreLedger(); } }
        """);
    SourceTree.write(tree, "dev/once/firestore/FirestoreLedger.java", """
        package dev.once.firestore;
        public final class FirestoreLedger implements dev.once.ledger.Ledger {}
        """);
    SourceTree.write(tree, "dev/once/ledger/Wrapper.java", """
        package dev.once.ledger;
        public final class Wrapper { private final dev.once.internal.Machine machine = null; }
        """);
    SourceTree.write(tree, "dev/once/internal/Machine.java", """
        package dev.once.internal;
        import dev.once.ledger.Wrapper;
        public final class Machine { Wrapper wrapper; }
        """);
    SourceTree.write(tree, "dev/once/ledger/Memory.java", """
        package dev.once.ledger;
        public final class Memory implements Ledger {}
        """);

    assertEquals(List.of(
        List.of("dev/once/firestore/FirestoreLedger.java", "dev/once/ledger/Ledger.java"),
        List.of("dev/once/internal/Machine.java", "dev/once/ledger/Wrapper.java")),
        FileCircles.circles(tree));
  }
}
