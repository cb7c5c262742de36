package dev.once.terraform.check;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

/**
 * Every function runs the Java the code is compiled for: runtime {@code java<N>} where N is the parent pom's
 * {@code maven.compiler.release} (a class file newer than the runtime does not load; an older runtime than the
 * release would fail, a newer one would hide that the build targets another version).
 */
public final class RuntimeCheck implements Check {
  private final String release;

  public RuntimeCheck(String release) {
    this.release = release;
  }

  /** The release of the parent pom, which must agree with the compiler plugin's own release when that is literal. */
  public static RuntimeCheck fromParentPom(Path pom) {
    Document doc = read(pom);
    String property = text(doc.getDocumentElement(), "properties", "maven.compiler.release")
        .orElseThrow(() -> new IllegalStateException(pom + " has no <properties><maven.compiler.release>"));
    NodeList plugins = doc.getElementsByTagName("plugin");
    for (int i = 0; i < plugins.getLength(); i++) {
      Element plugin = (Element) plugins.item(i);
      if (text(plugin, "artifactId").equals(Optional.of("maven-compiler-plugin"))) {
        Optional<String> pluginRelease = text(plugin, "configuration", "release");
        if (pluginRelease.isPresent() && !pluginRelease.get().startsWith("${")
            && !pluginRelease.get().equals(property)) {
          throw new IllegalStateException(pom + ": maven-compiler-plugin compiles for release " + pluginRelease.get()
              + " but maven.compiler.release is " + property + "; make them agree");
        }
      }
    }
    return new RuntimeCheck(property);
  }

  @Override
  public List<Finding> findings(TerraformConfig config) {
    List<Finding> findings = new ArrayList<>();
    String expected = "java" + release;
    for (Block function : config.resources("google_cloudfunctions2_function")) {
      Optional<String> runtime = config.literal(function.nested("build_config").path("runtime"));
      if (!runtime.equals(Optional.of(expected))) {
        findings.add(new Finding(function.file(), function.address(), "runs " + runtime.orElse("(no literal runtime)")
            + ", but the code is compiled with --release " + release + " (maven.compiler.release in pom.xml).",
            "set build_config.runtime = \"" + expected + "\", or change the release in pom.xml and here together."));
      }
    }
    return findings;
  }

  private static Document read(Path pom) {
    try {
      DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
      factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
      return factory.newDocumentBuilder().parse(pom.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (ParserConfigurationException | SAXException e) {
      throw new IllegalStateException("cannot read " + pom + ": " + e.getMessage(), e);
    }
  }

  /** The trimmed text of the first child path under {@code from}, direct children only. */
  private static Optional<String> text(Element from, String... path) {
    Element current = from;
    for (String name : path) {
      Element next = null;
      for (var child = current.getFirstChild(); child != null; child = child.getNextSibling()) {
        if (child instanceof Element e && e.getTagName().equals(name)) {
          next = e;
          break;
        }
      }
      if (next == null) {
        return Optional.empty();
      }
      current = next;
    }
    return Optional.of(current.getTextContent().strip());
  }
}
