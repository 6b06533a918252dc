import type { StopReason, Usage } from '@kode/protocol'
import {
  type ErrorContext,
  type EventMapper,
  errorFromPayload,
  parseEventJson,
} from '@kode/providers/adapter'

/** The Cohere v2 stream events this plugin reads; the rest (citations, debug) are ignored. */
type CohereEvent =
  | { type: 'message-start'; id?: string }
  | {
      type: 'content-start' | 'content-delta'
      index?: number
      delta?: { message?: { content?: ContentDelta } }
    }
  | { type: 'content-end'; index?: number }
  | { type: 'tool-plan-delta'; delta?: { message?: { tool_plan?: string } } }
  | {
      type: 'tool-call-start' | 'tool-call-delta'
      index?: number
      delta?: { message?: { tool_calls?: ToolCallDelta } }
    }
  | { type: 'tool-call-end'; index?: number }
  | { type: 'message-end'; delta?: { finish_reason?: string; usage?: CohereUsage; error?: string } }

interface ContentDelta {
  type?: string
  text?: string
  thinking?: string
}

interface ToolCallDelta {
  id?: string
  function?: { name?: string; arguments?: string }
}

interface CohereUsage {
  billed_units?: { input_tokens?: number; output_tokens?: number }
  tokens?: { input_tokens?: number; output_tokens?: number }
}

/**
 * Cohere's `/v2/chat` stream, event by event: content deltas are text (or thinking, for reasoning
 * models), the tool plan is thinking, tool calls arrive by index, and `message-end` carries the
 * finish reason and usage. Everything else is ignored, so new event types cannot break it.
 */
export function createCohereEventMapper(errors: ErrorContext): EventMapper {
  return (event, out) => {
    const data = parseEventJson(event.data, errors) as CohereEvent
    switch (data.type) {
      case 'message-start':
        return out.responseId(data.id)
      case 'content-start':
      case 'content-delta': {
        const content = data.delta?.message?.content
        if (content?.thinking) out.thinking(content.thinking)
        if (content?.text) out.text(content.text)
        return
      }
      case 'content-end':
        return out.endBlock()
      case 'tool-plan-delta':
        return out.thinking(data.delta?.message?.tool_plan ?? '')
      case 'tool-call-start':
      case 'tool-call-delta': {
        const call = data.delta?.message?.tool_calls
        const index = data.index ?? 0
        if (call?.id || call?.function?.name) out.toolCall(index, call.id, call.function?.name)
        return out.toolCallArgs(index, call?.function?.arguments ?? '')
      }
      case 'tool-call-end':
        return out.endBlock(data.index ?? 0)
      case 'message-end': {
        const end = data.delta ?? {}
        if (end.finish_reason === 'ERROR')
          throw errorFromPayload({ message: end.error ?? 'generation failed' }, errors)
        const usage = end.usage && cohereUsage(end.usage)
        if (usage) out.usage(usage)
        const raw = end.finish_reason ?? 'COMPLETE'
        out.stop(raw, cohereStopReason(raw))
        // `message-end` is also the stream's terminal event (the factory declares `terminal_event`).
        return out.complete()
      }
      default:
        return
    }
  }
}

/** `finish_reason` -> Kode's stop reason; values Kode has no word for map to none. */
export function cohereStopReason(reason: string): StopReason | undefined {
  switch (reason) {
    case 'COMPLETE':
    case 'STOP_SEQUENCE':
      return 'stop'
    case 'MAX_TOKENS':
      return 'length'
    case 'TOOL_CALL':
      return 'tool_use'
    default:
      return undefined
  }
}

/** The tokens the model saw and produced (`tokens`), else the billed ones. Absent stays absent. */
export function cohereUsage(usage: CohereUsage): Usage | undefined {
  const out: Usage = {}
  const input = usage.tokens?.input_tokens ?? usage.billed_units?.input_tokens
  const output = usage.tokens?.output_tokens ?? usage.billed_units?.output_tokens
  if (typeof input === 'number') out.inputTokens = input
  if (typeof output === 'number') out.outputTokens = output
  return Object.keys(out).length > 0 ? out : undefined
}
