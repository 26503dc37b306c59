/**
 * Put `key` in `map` as its newest entry, and forget the oldest once `map` holds more than `max`:
 * the bound of every memo and "recently seen" set that must not grow with what clients send
 * (a Map keeps insertion order, so its first key is the oldest).
 */
export function keepBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as K);
}
