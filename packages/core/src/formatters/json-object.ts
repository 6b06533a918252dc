/**
 * The end (exclusive) of the JSON object that starts at `text[start]` (a `{`), found by matching
 * braces outside strings; -1 when the object never closes. It does not validate the JSON: the
 * tool's argument parser does, and reports what is wrong to the model.
 */
export function jsonObjectEnd(text: string, start: number): number {
  let depth = 0
  let inString = false
  for (let i = start; i < text.length; i++) {
    const char = text[i]
    if (inString) {
      if (char === '\\') i++
      else if (char === '"') inString = false
      continue
    }
    if (char === '"') inString = true
    else if (char === '{') depth++
    else if (char === '}' && --depth === 0) return i + 1
  }
  return -1
}
