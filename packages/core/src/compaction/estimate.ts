import type { Message, ToolDefinition } from '@kode/protocol'

/**
 * Counts the tokens of a text. The default, {@link estimateTokens}, is a documented estimate; a
 * host with the model's real tokenizer passes it as `createAgent({ countTokens })`.
 */
export type TokenCounter = (text: string) => number

/**
 * The default token estimate: one token per 4 characters (rounded up). It overestimates English
 * prose and code slightly for today's tokenizers, which is the safe side for a budget.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4)
}

/**
 * A host's counter whose answers are checked: one that is not a finite number >= 0 (`NaN` from a
 * tokenizer that failed, `undefined`, a string) counts that text by the estimate instead. Taken
 * as it is, a single `NaN` made every budget `NaN`, which no threshold passes: compaction stopped,
 * with nothing said.
 */
function checkedCounter(count: TokenCounter): TokenCounter {
  return (text) => {
    const tokens: unknown = count(text)
    return typeof tokens === 'number' && tokens >= 0 && Number.isFinite(tokens)
      ? tokens
      : estimateTokens(text)
  }
}

/** What an image is counted as: about what a 1,000-pixel image costs on the major apis. */
export const IMAGE_TOKENS = 1_200
/** What the wire adds around each message (role, separators). */
const MESSAGE_OVERHEAD = 4

/**
 * Estimated tokens of messages and request parts, each message counted once (messages never
 * change; the cache is per agent, keyed by the message object).
 */
export class TokenEstimator {
  readonly #count: TokenCounter
  readonly #messages = new WeakMap<Message, number>()
  readonly #instructions = new WeakMap<object, number>()

  constructor(count: TokenCounter) {
    this.#count = count === estimateTokens ? count : checkedCounter(count)
  }

  text(text: string): number {
    return this.#count(text)
  }

  message(message: Message): number {
    let tokens = this.#messages.get(message)
    if (tokens === undefined) {
      tokens = MESSAGE_OVERHEAD + this.#parts(message)
      this.#messages.set(message, tokens)
    }
    return tokens
  }

  /** The system text and tool definitions every request carries. */
  instructions(system: string | undefined, tools: readonly ToolDefinition[] | undefined): number {
    let toolTokens = 0
    if (tools) {
      const cached = this.#instructions.get(tools)
      toolTokens = cached ?? this.#count(JSON.stringify(tools))
      if (cached === undefined) this.#instructions.set(tools, toolTokens)
    }
    return toolTokens + (system === undefined ? 0 : this.#count(system))
  }

  #parts(message: Message): number {
    let tokens = 0
    if (message.role === 'tool') tokens += this.#count(message.toolName) + this.#count(message.outputText)
    for (const part of message.parts) {
      switch (part.type) {
        case 'text':
        case 'thinking_text':
          tokens += this.#count(part.text)
          break
        case 'tool_call':
          tokens += this.#count(part.name) + this.#count(part.argumentsJson)
          break
        case 'image_url':
        case 'image_file':
          tokens += IMAGE_TOKENS
          break
        // A provider-run tool (web search, code execution) goes back with its results.
        case 'server_tool':
          tokens += this.#count(JSON.stringify(part.block))
          break
        // Signatures are opaque to the model's tokenizer on most apis; they cost bytes, not context.
        case 'thinking_signature':
          break
        default: {
          const unknown: never = part
          void unknown
        }
      }
    }
    return tokens
  }
}
