package dev.once.ledger.spi;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Whole-number fields added up over documents as read, leaving out one whose selecting field holds another value or
 * that lacks a summed field (as an index of them does): what {@link RecordStore#sum} answers by default.
 */
final class Sums {
  private Sums() {}

  static Map<String, Long> of(Collection<Map<String, Object>> documents, String field, Object value,
      List<String> fields) {
    Map<String, Long> sums = new LinkedHashMap<>();
    fields.forEach(summed -> sums.put(summed, 0L));
    for (Map<String, Object> document : documents) {
      if (Objects.equals(document.get(field), value)
          && fields.stream().allMatch(summed -> document.get(summed) instanceof Number)) {
        fields.forEach(summed -> sums.merge(summed, ((Number) document.get(summed)).longValue(), Math::addExact));
      }
    }
    return sums;
  }
}
