package dev.once.terraform.check;

/**
 * One inconsistency: where it is (file and Terraform address, or a Java source), what is wrong and what to do.
 *
 * @param file the .tf file (or source file) it was found in, relative to its directory
 * @param address the Terraform address ({@code google_x.y}, {@code var.x}) or other location in that file
 */
public record Finding(String file, String address, String problem, String fix) {
  @Override
  public String toString() {
    return file + ": " + address + ": " + problem + " Fix: " + fix;
  }
}
