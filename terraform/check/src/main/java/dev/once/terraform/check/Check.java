package dev.once.terraform.check;

import java.util.List;

/** One offline check of a parsed Terraform configuration; no findings means it holds. */
public interface Check {
  List<Finding> findings(TerraformConfig config);
}
