package dev.once.ledger.spi;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Whole-number fields added up over documents as read, leaving out a document that lacks one of them (as an index of
 * the fields does): what {@link RecordStore#sum} answers by default.
 */
final class Sums {
  private Sums() {}

  static Map<String, Long> of(Collection<Map<String, Object>> documents, List<String> fields) {
    Map<String, Long> sums = new LinkedHashMap<>();
    fields.forEach(field -> sums.put(field, 0L));
    for (Map<String, Object> document : documents) {
      if (fields.stream().allMatch(field -> document.get(field) instanceof Number)) {
        fields.forEach(field -> sums.merge(field, ((Number) document.get(field)).longValue(), Math::addExact));
      }
    }
    return sums;
  }
}
