/**
 * A table looked up with text from outside (a prompt, a fence tag, a vendor's
 * event type): without a prototype, so "constructor" or "__proto__" finds
 * nothing instead of an inherited function.
 */
export function lookupTable<T>(entries: Record<string, T>): Readonly<Partial<Record<string, T>>> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, T>, entries));
}
