package dev.once.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class SettingTest {
  static final class Misnamed {
    public static final Setting ONE = new Setting("ONE", null, "the first");
    public static final Setting TWO = new Setting("THREE", "3", "named otherwise");
  }

  @Test
  void theLibrarysSettings_areItsConstants_inOrder() {
    assertEquals(List.of("GOOGLE_CLOUD_PROJECT", "FIRESTORE_EMULATOR_HOST", "ONCE_COLLECTION", "ONCE_LEASE_SECONDS",
        "ONCE_MAX_ATTEMPTS", "ONCE_RETENTION_DAYS", "ONCE_BUDGET_TIMEZONE"),
        OnceSetting.values().stream().map(Setting::name).toList());
    assertEquals("idempotency", OnceSetting.ONCE_COLLECTION.defaultValue());
  }

  @Test
  void aFieldNamedOtherwiseThanItsVariable_isRefused() {
    IllegalStateException refused = assertThrows(IllegalStateException.class, () -> Setting.declaredIn(Misnamed.class));
    assertEquals(Misnamed.class.getName() + ".TWO names THREE", refused.getMessage());
  }

  @Test
  void aSettingIsAnUpperCaseNameWithADescription() {
    assertThrows(IllegalArgumentException.class, () -> new Setting("lower", null, "x"));
    assertThrows(IllegalArgumentException.class, () -> new Setting("UPPER", null, " "));
  }
}
