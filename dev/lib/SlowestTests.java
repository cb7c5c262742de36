import java.io.IOException;
import java.io.InputStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import javax.xml.stream.XMLInputFactory;
import javax.xml.stream.XMLStreamConstants;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;

/**
 * What dev/test prints at its end: the ten slowest test classes of this run with their seconds, and the tests run per
 * module, read from the surefire and failsafe reports (TEST-*.xml) written since {@code args[1]} was touched.
 * Run as a source file: {@code java dev/lib/SlowestTests.java ROOT MARKER}.
 */
public class SlowestTests {
  private static final int SHOWN = 10;
  private static final Set<String> SKIPPED = Set.of(".git", "src", "node_modules", "example-m2", "once-repo",
      "classes", "test-classes", "it-logs", "emulators");

  record Suite(String module, String kind, String name, double seconds, int tests, int failed, int skipped) {}

  public static void main(String[] args) throws IOException {
    Path root = Path.of(args[0]);
    FileTime since = Files.getLastModifiedTime(Path.of(args[1]));
    List<Suite> suites = new ArrayList<>();
    for (Path report : reports(root, since)) {
      suites.add(read(root, report));
    }
    if (suites.isEmpty()) {
      System.out.println("dev/test: no test reports written by this run");
      return;
    }
    System.out.printf("dev/test: the %d slowest test classes (seconds in their JVM; failsafe forks run side by side)%n",
        Math.min(SHOWN, suites.size()));
    suites.stream().sorted(Comparator.comparingDouble(Suite::seconds).reversed()).limit(SHOWN)
        .forEach(s -> System.out.printf("  %7.1f  %-16s %-8s %-44s %4d tests%n", s.seconds(), s.module(), s.kind(),
            s.name().substring(s.name().lastIndexOf('.') + 1), s.tests()));
    Map<String, int[]> modules = new TreeMap<>();
    for (Suite s : suites) {
      int[] totals = modules.computeIfAbsent(s.module() + " " + s.kind(), m -> new int[4]);
      totals[0]++;
      totals[1] += s.tests();
      totals[2] += s.failed();
      totals[3] += s.skipped();
    }
    System.out.println("dev/test: tests run per module (classes, tests, failed or in error, skipped)");
    int[] all = new int[4];
    modules.forEach((module, t) -> {
      System.out.printf("  %-26s %4d %6d %4d %4d%n", module, t[0], t[1], t[2], t[3]);
      for (int i = 0; i < all.length; i++) {
        all[i] += t[i];
      }
    });
    System.out.printf("  %-26s %4d %6d %4d %4d%n", "all", all[0], all[1], all[2], all[3]);
  }

  /** The reports under {@code root} written since {@code since}, not looking into sources, repositories or .git. */
  private static List<Path> reports(Path root, FileTime since) throws IOException {
    List<Path> found = new ArrayList<>();
    Files.walkFileTree(root, new SimpleFileVisitor<>() {
      @Override
      public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attributes) {
        boolean skipped = !dir.equals(root) && SKIPPED.contains(dir.getFileName().toString());
        return skipped ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
        if (isReport(file) && attributes.lastModifiedTime().compareTo(since) >= 0) {
          found.add(file);
        }
        return FileVisitResult.CONTINUE;
      }
    });
    return found;
  }

  private static boolean isReport(Path path) {
    String name = path.getFileName().toString();
    String dir = path.getParent() == null ? "" : path.getParent().getFileName().toString();
    return name.startsWith("TEST-") && name.endsWith(".xml")
        && (dir.equals("surefire-reports") || dir.equals("failsafe-reports"));
  }

  /** The report's {@code testsuite} element: module = the path from the root to {@code target/}. */
  private static Suite read(Path root, Path report) throws IOException {
    Path reports = report.getParent();
    Path module = root.relativize(reports.getParent().getParent());
    String kind = reports.getFileName().toString().startsWith("failsafe") ? "IT" : "unit";
    try (InputStream in = Files.newInputStream(report)) {
      XMLStreamReader xml = XMLInputFactory.newInstance().createXMLStreamReader(in);
      while (xml.hasNext()) {
        if (xml.next() == XMLStreamConstants.START_ELEMENT && xml.getLocalName().equals("testsuite")) {
          return new Suite(module.toString().isEmpty() ? "." : module.toString(), kind,
              xml.getAttributeValue(null, "name"), number(xml, "time"), (int) number(xml, "tests"),
              (int) (number(xml, "failures") + number(xml, "errors")), (int) number(xml, "skipped"));
        }
      }
      throw new IOException("no testsuite element in " + report);
    } catch (XMLStreamException e) {
      throw new IOException("could not read " + report, e);
    }
  }

  private static double number(XMLStreamReader xml, String attribute) {
    String value = xml.getAttributeValue(null, attribute);
    return value == null || value.isBlank() ? 0 : Double.parseDouble(value.replace(",", ""));
  }
}
