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
 * (a content type the pipeline refuses) and an empty PDF (refused too). Each run's invoice and receipt are new bytes
 * (they carry the run's folder): the pipeline analyses the same bytes once per bucket, so a second run with the
 * same documents would show only duplicates of the first.
 */
public final class Samples {
  /** One document to upload. */
  public record Sample(String fileName, String contentType, byte[] content) {}

  private Samples() {}

  /** @param run what makes this run's documents its own (its folder) */
  public static List<Sample> all(String run) {
    return List.of(
        new Sample("invoice.pdf", "application/pdf", InvoicePdf.of("DEMO-0001 " + run)),
        new Sample("receipt.png", "image/png", png(run.hashCode())),
        new Sample("notes.txt", "text/plain", "Remember to pay ACME by Friday.\n".getBytes(StandardCharsets.UTF_8)),
        new Sample("empty.pdf", "application/pdf", new byte[0]));
  }

  /**
   * A 16×16 PNG (a receipt-coloured square): what a phone photo of a receipt is, minus the size; its top row holds
   * {@code stamp}'s 16 low bits, so two stamps make two images.
   */
  static byte[] png(int stamp) {
    BufferedImage image = new BufferedImage(16, 16, BufferedImage.TYPE_INT_RGB);
    for (int x = 0; x < 16; x++) {
      for (int y = 0; y < 16; y++) {
        boolean dark = y == 0 ? (stamp >>> x & 1) == 1 : (x + y) % 4 == 0;
        image.setRGB(x, y, dark ? Color.DARK_GRAY.getRGB() : Color.WHITE.getRGB());
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
