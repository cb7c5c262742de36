package dev.once.local.stack;

import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LocalStackBuilderTest {
  private final LocalStack.Builder plan = LocalStack.builder("p", Path.of("target/unused"));

  @Test
  void onlyFunctions_refusesWhatIsNotAFunction_orNothing() {
    assertThrows(IllegalArgumentException.class, () -> plan.onlyFunctions(EnumSet.of(Part.FIRESTORE)));
    assertThrows(IllegalArgumentException.class,
        () -> plan.onlyFunctions(EnumSet.of(Part.DOCUMENT_UPLOADED, Part.RELAY)));
    assertThrows(IllegalArgumentException.class, () -> plan.onlyFunctions(Set.of()));
  }
}
