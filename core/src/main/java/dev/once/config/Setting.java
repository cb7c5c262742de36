package dev.once.config;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

/**
 * An environment variable the code reads: its name, the value used when it is unset or blank (null when there is
 * none), and what it means. The library's own are {@link OnceSetting}'s constants; an application declares its own
 * the same way, as {@code public static final} fields named as their variables. Terraform's checks compare these
 * lists with the variables the deployment sets, so a setting cannot be added on one side only.
 */
public record Setting(String name, String defaultValue, String description) {
  public Setting {
    if (name == null || !name.matches("[A-Z][A-Z0-9_]*") || description == null || description.isBlank()) {
      throw new IllegalArgumentException("a setting is an upper-case variable name with a description, got " + name);
    }
  }

  /** The settings {@code holder} declares as public static fields, in order; each field is named as its variable. */
  public static List<Setting> declaredIn(Class<?> holder) {
    List<Setting> declared = new ArrayList<>();
    for (Field field : holder.getDeclaredFields()) {
      if (field.getType() == Setting.class && Modifier.isStatic(field.getModifiers())) {
        Setting setting;
        try {
          setting = (Setting) field.get(null);
        } catch (IllegalAccessException e) {
          throw new IllegalStateException(holder.getName() + "." + field.getName() + " is not public", e);
        }
        if (!setting.name().equals(field.getName())) {
          throw new IllegalStateException(holder.getName() + "." + field.getName() + " names " + setting.name());
        }
        declared.add(setting);
      }
    }
    return List.copyOf(declared);
  }
}
