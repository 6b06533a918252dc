import type { StopDetails, StopReason, Usage } from '@kode/protocol'
import type { EventMapper } from '../../adapter/spec.js'
import {
  type ErrorContext,
  errorFromPayload,
  parseEventJson,
  transportError,
} from '../../transport/failures.js'
import { count } from '../shared/counts.js'
import { AnthropicBlocks } from './blocks.js'

/**
 * Anthropic's usage fields: `input_tokens` excludes cache reads and writes; `output_tokens`
 * includes the thinking counted in `output_tokens_details.thinking_tokens`.
 */
export interface AnthropicUsage {
  input_tokens?: number | null
  output_tokens?: number | null
  cache_read_input_tokens?: number | null
  cache_creation_input_tokens?: number | null
  output_tokens_details?: { thinking_tokens?: number | null } | null
}

/** The events of a Messages stream, as far as Kode reads them. */
type AnthropicEvent =
  | { type: 'message_start'; message?: StartMessage }
  | { type: 'content_block_start'; index: number; content_block?: unknown }
  | { type: 'content_block_delta'; index: number; delta?: BlockDelta }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta'
      delta?: {
        stop_reason?: string | null
        stop_details?: AnthropicStopDetails | null
        container?: unknown
      }
      usage?: AnthropicUsage
    }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error?: unknown }

/**
 * `message_start`'s message. Usually empty, but it may already hold whole content blocks and a
 * stop reason (programmatic tool calling), followed directly by `message_stop`.
 */
interface StartMessage {
  id?: string
  usage?: AnthropicUsage
  content?: unknown
  stop_reason?: string | null
  stop_details?: AnthropicStopDetails | null
  /** The code-execution container the response ran in: the next request names it. */
  container?: unknown
}

/** Sent with some stop reasons (`refusal`): why, in the provider's words. */
interface AnthropicStopDetails {
  type?: string
  category?: string | null
  explanation?: string | null
}

type BlockDelta =
  | { type: 'text_delta'; text?: string }
  | { type: 'thinking_delta'; thinking?: string }
  | { type: 'signature_delta'; signature?: string }
  | { type: 'input_json_delta'; partial_json?: string }
  | { type: 'citations_delta'; citation?: unknown }
  | { type: string }

/**
 * The Messages stream, event by event. Content may arrive whole in `message_start`, whole in
 * `content_block_start`, or in deltas, for every block type (see {@link AnthropicBlocks}). Blocks
 * of tools Anthropic runs itself (web search, code execution, MCP, ...) are kept as `server_tool`
 * parts, never as tool calls. `ping`, unknown events and other block types (`fallback`) are
 * ignored. A text block's citations (`citations_delta`, or its `citations` when it comes whole) are
 * kept on its text part. A repeated `message_start` for the open message is ignored; one for a different message
 * while the first is open means an intermediary spliced a second response into this one, which
 * fails as `stream_spliced` rather than mixing two responses' signed thinking. Usage from
 * `message_start` is updated by each `message_delta`, which also carries the stop reason and, for a
 * refusal, `stop_details` (kept as the message's `stopDetails`); the `container` either names is
 * kept in the message's `providerFields`. With `outputTool` (a structured
 * output was asked), that tool's input is the answer: it arrives as text, and a response that
 * called no other tool stops as `stop`.
 */
export function createAnthropicEventMapper(errors: ErrorContext, outputTool?: string): EventMapper {
  let openMessage: string | undefined
  let usage: AnthropicUsage = {}
  const blocks = new AnthropicBlocks(outputTool)
  return (event, out) => {
    const data = parseEventJson(event.data, errors) as AnthropicEvent
    switch (data.type) {
      case 'content_block_delta': {
        // The event of nearly every token: its cases are plain comparisons here, in the one
        // function every event runs. A field of another type (a hostile or broken server) counts
        // as no text.
        const delta = data.delta
        if (!delta) return
        switch (delta.type) {
          case 'text_delta': {
            const text = (delta as { text?: unknown }).text
            return out.text(typeof text === 'string' ? text : '')
          }
          case 'input_json_delta': {
            const json = (delta as { partial_json?: unknown }).partial_json
            return blocks.inputJson(out, data.index, typeof json === 'string' ? json : '')
          }
          case 'thinking_delta': {
            const thinking = (delta as { thinking?: unknown }).thinking
            return out.thinking(typeof thinking === 'string' ? thinking : '')
          }
          case 'citations_delta':
            return blocks.citation(out, (delta as { citation?: unknown }).citation)
          case 'signature_delta': {
            const signature = (delta as { signature?: unknown }).signature
            if (typeof signature === 'string' && signature) out.signature(signature, { format: 'anthropic' })
            return
          }
          default:
            return
        }
      }
      case 'message_start': {
        const message = data.message
        const id = message?.id
        if (openMessage !== undefined) {
          if (id === openMessage) return
          throw transportError(
            errors,
            'stream_spliced',
            `a second message (${id}) started inside ${openMessage}`,
            {
              retryable: true,
            },
          )
        }
        openMessage = typeof id === 'string' ? id : ''
        out.responseId(typeof id === 'string' ? id : undefined)
        usage = mergeUsage(usage, message?.usage)
        out.usage(anthropicUsage(usage))
        keepContainer(message?.container, out)
        const content = message?.content
        if (Array.isArray(content))
          for (let i = 0; i < content.length; i++) blocks.start(out, i, content[i], true)
        stop(message?.stop_reason, message?.stop_details, out, blocks.answeredOnly)
        return
      }
      case 'content_block_start':
        return blocks.start(out, data.index, data.content_block, false)
      case 'content_block_stop':
        return blocks.stop(out, data.index)
      case 'message_delta': {
        keepContainer(data.delta?.container, out)
        stop(data.delta?.stop_reason, data.delta?.stop_details, out, blocks.answeredOnly)
        if (data.usage) {
          usage = mergeUsage(usage, data.usage)
          out.usage(anthropicUsage(usage))
        }
        return
      }
      case 'message_stop':
        openMessage = undefined
        return out.complete()
      case 'error':
        throw errorFromPayload(data, errors)
      default:
        return
    }
  }
}

function stop(
  reason: unknown,
  details: AnthropicStopDetails | null | undefined,
  out: Parameters<EventMapper>[1],
  answeredOnly: boolean,
): void {
  if (typeof reason !== 'string' || !reason) return
  // The answer tool's call is the answer, not a call to run: the response stopped.
  const mapped = answeredOnly && reason === 'tool_use' ? 'stop' : anthropicStopReason(reason)
  out.stop(reason, mapped, stopDetailsOf(details))
}

/**
 * The response's `container` (`{ id, expires_at }`), kept whole on the message: a response whose
 * code called client tools must be answered in the same container (see `anthropicBody`).
 */
function keepContainer(container: unknown, out: Parameters<EventMapper>[1]): void {
  if (typeof container === 'object' && container !== null && !Array.isArray(container))
    out.responseFields({ format: 'anthropic', fields: { container } })
}

/** `stop_details` -> the message's `stopDetails`: its category and explanation, when it has either. */
function stopDetailsOf(details: AnthropicStopDetails | null | undefined): StopDetails | undefined {
  if (!details || typeof details !== 'object') return undefined
  const out: StopDetails = {}
  if (typeof details.category === 'string') out.category = details.category
  if (typeof details.explanation === 'string') out.explanation = details.explanation
  return out.category === undefined && out.explanation === undefined ? undefined : out
}

/** `stop_reason` -> Kode's stop reason; `refusal`, `pause_turn` and unknown values have none. */
export function anthropicStopReason(reason: string): StopReason | undefined {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop'
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length'
    case 'tool_use':
      return 'tool_use'
    default:
      return undefined
  }
}

/** Anthropic usage -> Kode usage: input made inclusive of cache reads and writes. */
export function anthropicUsage(usage: AnthropicUsage): Usage {
  const out: Usage = {}
  const read = count(usage.cache_read_input_tokens)
  const write = count(usage.cache_creation_input_tokens)
  const input = count(usage.input_tokens)
  if (input !== undefined) out.inputTokens = input + (read ?? 0) + (write ?? 0)
  const output = count(usage.output_tokens)
  if (output !== undefined) out.outputTokens = output
  if (read !== undefined) out.cacheReadTokens = read
  if (write !== undefined) out.cacheWriteTokens = write
  const thinking = count(usage.output_tokens_details?.thinking_tokens)
  if (thinking !== undefined) out.reasoningTokens = thinking
  return out
}

/** Later counts replace earlier ones; a count sent as null does not erase one we have. */
function mergeUsage(base: AnthropicUsage, next: AnthropicUsage | undefined): AnthropicUsage {
  if (!next) return base
  const out = { ...base }
  for (const key of USAGE_KEYS) {
    const value = next[key]
    if (value !== undefined && value !== null) out[key] = value
  }
  const thinking = next.output_tokens_details?.thinking_tokens
  if (thinking !== undefined && thinking !== null) out.output_tokens_details = { thinking_tokens: thinking }
  return out
}

const USAGE_KEYS = [
  'input_tokens',
  'output_tokens',
  'cache_read_input_tokens',
  'cache_creation_input_tokens',
] as const satisfies readonly (keyof AnthropicUsage)[]
