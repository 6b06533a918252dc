import type { ServerToolBlock } from '@kode/protocol'

/** The code-execution parts of a Gemini response, as the wire has them. */
export interface CodeExecutionParts {
  /** The code the model wrote, which Gemini then ran (`{ language, code, id? }`). */
  executableCode?: unknown
  /** What running it gave (`{ outcome, output?, id? }`). */
  codeExecutionResult?: unknown
}

/** A wire part for a `server_tool` block: the block's field of its type, as Gemini sent it. */
export type CodeExecutionPart = { executableCode: object } | { codeExecutionResult: object }

/**
 * A response part of Gemini's code execution tool -> the `server_tool` block that keeps it:
 * `{ type: 'executableCode', executableCode }` or `{ type: 'codeExecutionResult',
 * codeExecutionResult }`, every field kept. `undefined` for any other part, and for a value that is
 * not an object (a hostile server's), which is dropped as if not sent.
 */
export function codeExecutionBlock(part: CodeExecutionParts): ServerToolBlock | undefined {
  const code = part.executableCode
  if (isObject(code)) return { type: 'executableCode', executableCode: code }
  const result = part.codeExecutionResult
  if (isObject(result)) return { type: 'codeExecutionResult', codeExecutionResult: result }
  return undefined
}

/**
 * A kept block -> the part it came from, so a conversation continues with the code the model ran
 * and what it printed. `undefined` for a block of another kind (another format's, or a later
 * Gemini tool Kode keeps but does not know).
 */
export function codeExecutionPart(block: ServerToolBlock): CodeExecutionPart | undefined {
  switch (block.type) {
    case 'executableCode':
      return isObject(block.executableCode) ? { executableCode: block.executableCode } : undefined
    case 'codeExecutionResult':
      return isObject(block.codeExecutionResult)
        ? { codeExecutionResult: block.codeExecutionResult }
        : undefined
    default:
      return undefined
  }
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
