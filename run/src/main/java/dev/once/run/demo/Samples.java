package dev.once.run.demo;

import dev.once.local.samples.InvoicePdf;
import java.awt.Color;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.imageio.ImageIO;

/**
 * The demo's documents, generated so no binary file is kept: a valid one-page invoice PDF, a small PNG, a text file
 * (a content type the pipeline refuses) and an empty PDF (refused too).
 */
public final class Samples {
  /** One document to upload. */
  public record Sample(String fileName, String contentType, byte[] content) {}

  private Samples() {}

  public static List<Sample> all() {
    return List.of(
        new Sample("invoice.pdf", "application/pdf", InvoicePdf.of("DEMO-0001")),
        new Sample("receipt.png", "image/png", png()),
        new Sample("notes.txt", "text/plain", "Remember to pay ACME by Friday.\n".getBytes(StandardCharsets.UTF_8)),
        new Sample("empty.pdf", "application/pdf", new byte[0]));
  }

  /** A 16×16 PNG (a receipt-coloured square): what a phone photo of a receipt is, minus the size. */
  static byte[] png() {
    BufferedImage image = new BufferedImage(16, 16, BufferedImage.TYPE_INT_RGB);
    for (int x = 0; x < 16; x++) {
      for (int y = 0; y < 16; y++) {
        image.setRGB(x, y, (x + y) % 4 == 0 ? Color.DARK_GRAY.getRGB() : Color.WHITE.getRGB());
      }
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      if (!ImageIO.write(image, "png", out)) {
        throw new IllegalStateException("this JDK has no PNG writer");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }
}
