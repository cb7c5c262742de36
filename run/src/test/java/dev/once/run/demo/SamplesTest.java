package dev.once.run.demo;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class SamplesTest {
  @Test
  void twoRuns_uploadOtherBytes_soTheSecondIsNotADuplicateOfTheFirst() {
    List<Samples.Sample> first = Samples.all("demo/run-1/");
    List<Samples.Sample> second = Samples.all("demo/run-2/");
    for (int i = 0; i < 2; i++) {
      assertFalse(Arrays.equals(first.get(i).content(), second.get(i).content()), first.get(i).fileName());
    }
  }

  @Test
  void oneRun_makesTheSameBytesEachTime() {
    assertArrayEquals(Samples.all("demo/run-1/").get(1).content(), Samples.all("demo/run-1/").get(1).content());
  }
}
