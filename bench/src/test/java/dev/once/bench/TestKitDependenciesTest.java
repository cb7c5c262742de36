package dev.once.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The test kit a user puts in test scope (once-testing) brings neither once-local (the emulator launchers and
 * stand-ins) nor a Google Cloud client (the Pub/Sub client, gRPC, gax) into the user's tests: what it shares with the
 * stand-ins is once-wire's (docs/DESIGN.md, "Where things live"). Read from the poms: from once-testing along every
 * dependency a user inherits (compile or runtime scope, not optional) through this project's modules, no module reached
 * is once-local and none declares such a client. A test-scope dependency reaches no user, so it is not followed.
 */
class TestKitDependenciesTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  static final String KIT = "once-testing";
  static final Set<String> NEVER_REACHED = Set.of("once-local");
  /** A Google Cloud client, or what one is made of; not the Functions API nor Google's event schemas (once-core's). */
  private static final Pattern GOOGLE_CLOUD_CLIENT = Pattern.compile(
      "com\\.google\\.cloud:google-cloud-.*|com\\.google\\.api(\\..*)?:.*|io\\.grpc:.*|com\\.google\\.genai:.*");
  private static final Pattern MODULE = Pattern.compile("<module>\\s*([^<\\s]+)\\s*</module>");

  /** One dependency of a pom: what it names, its scope, whether it is optional. */
  record Dependency(String groupId, String artifactId, String scope, boolean optional) {
    boolean inherited() {
      return !optional && (scope.isEmpty() || scope.equals("compile") || scope.equals("runtime"));
    }

    String coordinates() {
      return groupId + ":" + artifactId;
    }
  }

  @Test
  void theTestKit_reachesNeitherOnceLocal_norAGoogleCloudClient() throws Exception {
    assertEquals(List.of(), violations(ROOT));
    Set<String> read = modules(ROOT).keySet();
    assertTrue(read.containsAll(Set.of(KIT, "once-wire", "once-core", "once-local")),
        "the modules' poms were read: " + read);
  }

  @Test
  void aKitThatReachesOnceLocal_orAModuleDeclaringAClient_isReported_butNotATestDependency(@TempDir Path tree)
      throws Exception {
    SourceTree.write(tree, "pom.xml", pom("once-parent", "", "<modules><module>wire</module><module>local</module>"
        + "<module>core</module><module>testing</module></modules>"));
    SourceTree.write(tree, "wire/pom.xml", pom("once-wire",
        dependency("com.google.cloud", "google-cloud-pubsub", "") + dependency("io.grpc", "grpc-api", "test"), ""));
    SourceTree.write(tree, "local/pom.xml", pom("once-local", dependency("dev.once", "once-wire", ""), ""));
    SourceTree.write(tree, "core/pom.xml", pom("once-core",
        dependency("com.google.cloud", "google-cloudevent-types", "")
            + dependency("com.google.cloud.functions", "functions-framework-api", "")
            + dependency("dev.once", "once-local", "test"),
        ""));
    SourceTree.write(tree, "testing/pom.xml", pom("once-testing",
        dependency("dev.once", "once-core", "") + dependency("dev.once", "once-local", "runtime"), ""));

    assertEquals(List.of(
        "once-local is inherited by the kit's users: once-testing > once-local",
        "once-wire declares com.google.cloud:google-cloud-pubsub, a Google Cloud client, which the kit's users inherit:"
            + " once-testing > once-local > once-wire"),
        violations(tree));
  }

  /** What is wrong, one line each, in the order the modules are reached (breadth first from the kit). */
  static List<String> violations(Path root) throws Exception {
    Map<String, List<Dependency>> modules = modules(root);
    assertTrue(modules.containsKey(KIT), "no " + KIT + " among the modules of " + root.resolve("pom.xml"));
    List<String> found = new ArrayList<>();
    Map<String, String> pathTo = new LinkedHashMap<>(Map.of(KIT, KIT));
    Deque<String> next = new ArrayDeque<>(List.of(KIT));
    while (!next.isEmpty()) {
      String module = next.poll();
      for (Dependency dependency : modules.get(module)) {
        if (!dependency.inherited()) {
          continue;
        }
        if (GOOGLE_CLOUD_CLIENT.matcher(dependency.coordinates()).matches()) {
          found.add(module + " declares " + dependency.coordinates() + ", a Google Cloud client, which the kit's users"
              + " inherit: " + pathTo.get(module));
        }
        String reached = dependency.artifactId();
        if (dependency.groupId().equals("dev.once") && modules.containsKey(reached) && !pathTo.containsKey(reached)) {
          pathTo.put(reached, pathTo.get(module) + " > " + reached);
          if (NEVER_REACHED.contains(reached)) {
            found.add(reached + " is inherited by the kit's users: " + pathTo.get(reached));
          }
          next.add(reached);
        }
      }
    }
    return found;
  }

  /** The modules the root pom lists, by artifactId, each with the dependencies its pom declares. */
  static Map<String, List<Dependency>> modules(Path root) throws Exception {
    Map<String, List<Dependency>> modules = new LinkedHashMap<>();
    Matcher listed = MODULE.matcher(Files.readString(root.resolve("pom.xml")));
    while (listed.find()) {
      Document pom = parse(root.resolve(listed.group(1)).resolve("pom.xml"));
      Element project = pom.getDocumentElement();
      List<Dependency> dependencies = new ArrayList<>();
      Element declared = child(project, "dependencies");
      if (declared != null) {
        NodeList nodes = declared.getElementsByTagName("dependency");
        for (int i = 0; i < nodes.getLength(); i++) {
          Element dependency = (Element) nodes.item(i);
          dependencies.add(new Dependency(text(dependency, "groupId"), text(dependency, "artifactId"),
              text(dependency, "scope"), text(dependency, "optional").equals("true")));
        }
      }
      modules.put(text(project, "artifactId"), dependencies);
    }
    return modules;
  }

  private static Document parse(Path pom) throws Exception {
    if (!Files.isRegularFile(pom)) {
      throw new IOException("a module without a pom: " + pom);
    }
    return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
  }

  /** The direct child element {@code name} of {@code parent} (not one under dependencyManagement, say), or null. */
  private static Element child(Element parent, String name) {
    for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
      if (node instanceof Element element && element.getTagName().equals(name)) {
        return element;
      }
    }
    return null;
  }

  private static String text(Element parent, String name) {
    Element element = child(parent, name);
    return element == null ? "" : element.getTextContent().trim();
  }

  private static String pom(String artifactId, String dependencies, String rest) {
    return "<project><groupId>dev.once</groupId><artifactId>" + artifactId + "</artifactId>"
        + (dependencies.isEmpty() ? "" : "<dependencies>" + dependencies + "</dependencies>") + rest + "</project>";
  }

  private static String dependency(String groupId, String artifactId, String scope) {
    return "<dependency><groupId>" + groupId + "</groupId><artifactId>" + artifactId + "</artifactId>"
        + (scope.isEmpty() ? "" : "<scope>" + scope + "</scope>") + "</dependency>";
  }
}
