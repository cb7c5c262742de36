package dev.once.run.demo;

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
        new Sample("invoice.pdf", "application/pdf", invoicePdf("DEMO-0001")),
        new Sample("receipt.png", "image/png", png()),
        new Sample("notes.txt", "text/plain", "Remember to pay ACME by Friday.\n".getBytes(StandardCharsets.UTF_8)),
        new Sample("empty.pdf", "application/pdf", new byte[0]));
  }

  /** A small, valid one-page PDF invoice (the same shape the functions' end-to-end tests use). */
  static byte[] invoicePdf(String number) {
    String text = "BT /F1 12 Tf 72 720 Td (ACME Supplies Ltd - Invoice " + number + " - Total 120.00 EUR) Tj ET";
    String[] objects = {
      "<< /Type /Catalog /Pages 2 0 R >>",
      "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
      "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
      "<< /Length " + text.length() + " >>\nstream\n" + text + "\nendstream",
      "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    };
    StringBuilder pdf = new StringBuilder("%PDF-1.4\n");
    int[] offsets = new int[objects.length];
    for (int i = 0; i < objects.length; i++) {
      offsets[i] = pdf.length();
      pdf.append(i + 1).append(" 0 obj\n").append(objects[i]).append("\nendobj\n");
    }
    int xref = pdf.length();
    pdf.append("xref\n0 ").append(objects.length + 1).append("\n0000000000 65535 f \n");
    for (int offset : offsets) {
      pdf.append(String.format("%010d 00000 n \n", offset));
    }
    pdf.append("trailer\n<< /Size ").append(objects.length + 1).append(" /Root 1 0 R >>\nstartxref\n")
        .append(xref).append("\n%%EOF\n");
    return pdf.toString().getBytes(StandardCharsets.US_ASCII);
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
