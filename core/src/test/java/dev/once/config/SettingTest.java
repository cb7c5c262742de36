package dev.once.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
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
  void aWholeNumber_isReadWithinItsRange_andAnythingElseNamesTheVariableAndTheRange() {
    Setting days = new Setting("DAYS", null, "days");
    assertEquals(30, Settings.of(Map.of("DAYS", " 30 ")).wholeNumber(days, 30, 36_500));
    assertEquals(36_500, Settings.of(Map.of("DAYS", "36500")).wholeNumber(days, 30, 36_500));
    for (String value : List.of("29", "36501", "3.5", "ten", "-0x1")) {
      assertEquals("DAYS must be a whole number from 30 to 36500, got \"" + value + "\"", assertThrows(
          InvalidSetting.class, () -> Settings.of(Map.of("DAYS", value)).wholeNumber(days, 30, 36_500)).getMessage());
    }
    assertEquals("DAYS must be a whole number 1 or more, got \"0\"",
        assertThrows(InvalidSetting.class, () -> Settings.of(Map.of("DAYS", "0")).positiveLong(days)).getMessage());
    assertEquals("DAYS must be a whole number from 1 to 2147483647, got \"2147483648\"", assertThrows(
        InvalidSetting.class, () -> Settings.of(Map.of("DAYS", "2147483648")).positiveInt(days)).getMessage());
    assertThrows(MissingSetting.class, () -> Settings.of(Map.of()).wholeNumber(days, 0, 1));
  }

  @Test
  void aSettingIsAnUpperCaseNameWithADescription() {
    assertThrows(IllegalArgumentException.class, () -> new Setting("lower", null, "x"));
    assertThrows(IllegalArgumentException.class, () -> new Setting("UPPER", null, " "));
  }
}
