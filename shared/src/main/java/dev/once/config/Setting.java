package dev.once.config;

/**
 * An environment variable the code reads. The library's own are {@link OnceSetting}; an application lists its own
 * in an enum of its own implementing this. Terraform's checks compare these lists with the variables the deployment
 * sets, so a setting cannot be added on one side only.
 */
public interface Setting {
  /** The variable's name. */
  String name();

  /** The value used when the variable is unset or blank, or null when there is none. */
  String defaultValue();

  String description();
}
