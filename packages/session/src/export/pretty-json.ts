/**
 * Tool-call arguments as the model wrote them, indented two spaces a level when they are JSON (the
 * text as it is otherwise). The tokens are kept as written, never parsed into values and printed
 * again: a round trip through `JSON.parse` would show `12345678901234567890` as
 * `12345678901234567000`, `1e400` as `null` and only the last of two equal keys, which is not what
 * the model sent.
 */
export function prettyJson(text: string): string {
  try {
    JSON.parse(text)
  } catch {
    return text
  }
  return indent(text)
}

/** Re-indents text already known to be valid JSON, keeping each token as it is. */
function indent(text: string): string {
  let out = ''
  let depth = 0
  // An opening bracket waits for the next token: `{}` and `[]` stay on one line.
  let open = ''
  // One token: a string with its escapes, a punctuation mark, or a run of anything else (a number,
  // `true`, `false`, `null`). Whitespace between tokens is matched on its own and dropped.
  const tokens = /"(?:[^"\\]|\\.)*"|[{}[\]:,]|[^\s"{}[\]:,]+|\s+/gy
  for (let match = tokens.exec(text); match !== null; match = tokens.exec(text)) {
    const token = match[0]
    if (/^\s/.test(token)) continue
    const closing = token === '}' || token === ']'
    if (open) {
      out += open
      open = ''
      if (closing) {
        out += token
        continue
      }
      depth++
      out += newline(depth)
    } else if (closing) {
      depth--
      out += newline(depth)
    }
    if (token === '{' || token === '[') open = token
    else if (closing) out += token
    else if (token === ',') out += `,${newline(depth)}`
    else if (token === ':') out += ': '
    else out += token
  }
  return out + open
}

function newline(depth: number): string {
  return `\n${'  '.repeat(depth)}`
}
