package dev.once.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The bench prices each function at the size terraform/functions.tf deploys it with: the two must not drift. */
class FunctionSizesTest {
  private static final Path FUNCTIONS_TF = Path.of(System.getProperty("once.root", ".."), "terraform", "functions.tf");

  @Test
  void eachFunctionIsPricedAtItsDeployedSize() throws Exception {
    String tf = Files.readString(FUNCTIONS_TF);
    for (ListPrices.Function function : ListPrices.Function.values()) {
      Matcher block = Pattern.compile("entry_point\\s*=\\s*\"dev\\.once\\.functions\\." + function.title + "\"(.*?)"
          + "(?=\\nresource |\\z)", Pattern.DOTALL).matcher(tf);
      assertTrue(block.find(), function.title + " in " + FUNCTIONS_TF);
      String body = block.group(1);
      assertEquals(function.vcpu, Double.parseDouble(value(body, "available_cpu")), function.title + " vCPU");
      assertEquals(function.gib, Double.parseDouble(value(body, "available_memory").replace("Gi", "")),
          function.title + " GiB");
      assertEquals(function.concurrency, Integer.parseInt(value(body, "max_instance_request_concurrency")),
          function.title + " concurrency");
    }
  }

  private static String value(String body, String argument) {
    Matcher m = Pattern.compile(argument + "\\s*=\\s*\"?([^\"\\s]+)\"?").matcher(body);
    assertTrue(m.find(), argument);
    return m.group(1);
  }
}
