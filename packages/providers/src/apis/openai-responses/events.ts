import type { Citation, StopReason, Usage } from '@kode/protocol'
import type { EventMapper, ResponseBuilder, TextItem } from '../../adapter/spec.js'
import { type ErrorContext, errorFromPayload, parseEventJson } from '../../transport/failures.js'
import { citationOf, isFieldObject } from '../shared/citations.js'
import { inclusiveOutput, usageOf } from '../shared/counts.js'

/** An output item as the Responses stream and the final response carry it. */
export interface ResponsesOutputItem {
  type?: string
  id?: string
  /** message: `commentary` or `final_answer` (newer models). */
  phase?: string | null
  content?: { type?: string; text?: string; refusal?: string; annotations?: unknown }[] | null
  summary?: { type?: string; text?: string }[] | null
  encrypted_content?: string | null
  call_id?: string
  name?: string
  arguments?: string
}

/** The response object of `response.*` lifecycle events. */
export interface ResponsesResponse {
  id?: string
  status?: string
  output?: ResponsesOutputItem[] | null
  usage?: ResponsesUsage | null
  incomplete_details?: { reason?: string } | null
  error?: unknown
}

/** Responses usage: input includes cached tokens, output includes reasoning tokens. */
export interface ResponsesUsage {
  input_tokens?: number
  output_tokens?: number
  total_tokens?: number
  input_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null
  output_tokens_details?: { reasoning_tokens?: number } | null
}

/** The events Kode reads; every other event type is ignored. */
type ResponsesEvent =
  | { type: 'response.created' | 'response.in_progress'; response?: ResponsesResponse }
  | {
      type: 'response.output_item.added' | 'response.output_item.done'
      output_index: number
      item?: ResponsesOutputItem
    }
  | {
      type:
        | 'response.output_text.delta'
        | 'response.refusal.delta'
        | 'response.reasoning_summary_text.delta'
        | 'response.reasoning_text.delta'
        | 'response.function_call_arguments.delta'
      output_index: number
      delta?: string
    }
  | { type: 'response.reasoning_summary_part.added'; output_index: number; summary_index?: number }
  | { type: 'response.function_call_arguments.done'; output_index: number; arguments?: string }
  | { type: 'response.output_text.annotation.added'; output_index: number; annotation?: unknown }
  | { type: 'response.completed' | 'response.incomplete' | 'response.failed'; response?: ResponsesResponse }
  | { type: 'error'; error?: unknown; code?: unknown; message?: unknown }

/**
 * The items of tools OpenAI runs on its own side (web search, file search, code interpreter, a
 * remote MCP server): kept whole, when done, as `server_tool` parts in stream order, for the
 * transcript. Items of tools the host runs (`computer_call`, `local_shell_call`,
 * `custom_tool_call`) are none of these, and neither are images (`image_generation_call`, whose
 * result is a whole base64 image).
 */
const SERVER_TOOL_ITEMS: ReadonlySet<string> = new Set([
  'web_search_call',
  'file_search_call',
  'code_interpreter_call',
  'mcp_call',
  'mcp_list_tools',
])

/** What the mapper knows about one output item, by `output_index`. */
interface ItemState {
  /** Message items: what their text parts record. */
  text: TextItem | undefined
  /** Its `added` event (or, without one, its `done`) was mapped. */
  started: boolean
  /** Some of its content arrived as deltas (else it is mapped whole when it is done). */
  streamed: boolean
  done: boolean
  /**
   * Message items: how many of its annotations arrived as `annotation.added`, kept at once (a
   * response cut before the item is done keeps them); the finished item's list starts with them.
   */
  annotated: number
}

/**
 * The Responses stream, keyed by `output_index` rather than item ids (a proxy such as GitHub
 * Copilot rewrites ids on every event). Reasoning summaries and raw reasoning text become
 * thinking, one part per summary; the encrypted content of a finished reasoning item becomes an
 * `openai-responses` signature with the item id. Message text keeps the item id and `phase`.
 * A finished message's annotations become citations on its text. Function calls keep call id and
 * item id. The items of tools OpenAI runs itself (web search, ...)
 * become `openai-responses` `server_tool` parts. An item that arrives without deltas is mapped whole
 * from its `output_item.done`, and an item never streamed at all from `response.completed`.
 * `response.completed` means `stop`, or `tool_use` when the output holds function calls;
 * `response.incomplete` for `max_output_tokens` means `length`; both are terminal events.
 * `response.failed` and `error` events become a `ProviderError` (the usage a failed response
 * reports is kept on its partial).
 */
export function createResponsesEventMapper(errors: ErrorContext): EventMapper {
  const items = new Map<number, ItemState>()
  let calls = false
  // What was already mapped, for `response.completed` output whose index a proxy renumbered.
  const seenIds = new Set<string>()
  // The message text deltas, joined only when `response.completed` holds an item at an index no
  // event used (rare). Kept as references: a concatenated copy costs a string object per delta,
  // all of them alive until the end, on top of the text the accumulator already keeps.
  const streamedText: string[] = []

  const stateOf = (index: number): ItemState => {
    let state = items.get(index)
    if (!state) {
      state = { text: undefined, started: false, streamed: false, done: false, annotated: 0 }
      items.set(index, state)
    }
    return state
  }

  const start = (index: number, item: ResponsesOutputItem, out: ResponseBuilder): ItemState => {
    const state = stateOf(index)
    state.started = true
    if (typeof item.id === 'string') seenIds.add(item.id)
    if (typeof item.call_id === 'string') seenIds.add(item.call_id)
    out.endBlock()
    if (item.type === 'message') state.text = textItemOf(item)
    else if (item.type === 'function_call') {
      calls = true
      out.toolCall(index, item.call_id, item.name, item.id)
      if (item.arguments && !state.streamed) {
        out.toolCallArgs(index, item.arguments)
        state.streamed = true
      }
    }
    return state
  }

  const finish = (index: number, item: ResponsesOutputItem, out: ResponseBuilder) => {
    const known = items.get(index)
    const state = known?.started ? known : start(index, item, out)
    if (state.done) return
    state.done = true
    if (!state.streamed) mapWhole(index, item, state, out)
    if (item.type === 'message') {
      const citations = citationsOf(item)
      // Those reported as they arrived come first in the finished item's list: the rest are new.
      if (citations !== undefined && citations.length > state.annotated)
        out.citations(citations.slice(state.annotated), state.text)
    } else if (item.type === 'reasoning' && item.encrypted_content) {
      out.endBlock()
      const options = item.id
        ? { format: 'openai-responses' as const, itemId: item.id }
        : { format: 'openai-responses' as const }
      out.signature(item.encrypted_content, options)
    } else if (item.type === 'function_call') out.endBlock(index)
    else if (item.type !== undefined && SERVER_TOOL_ITEMS.has(item.type)) {
      out.endBlock()
      out.serverTool('openai-responses', item as ResponsesOutputItem & { type: string })
    }
  }

  // Deltas may arrive for an item whose `added` event never came; they still count as streamed.
  const delta = (index: number): ItemState => {
    const state = stateOf(index)
    state.streamed = true
    return state
  }

  return (event, out) => {
    const data = parseEventJson(event.data, errors) as ResponsesEvent
    switch (data.type) {
      case 'response.created':
      case 'response.in_progress':
        return out.responseId(data.response?.id)
      case 'response.output_item.added':
        if (data.item) start(data.output_index, data.item, out)
        return
      case 'response.output_text.delta':
      case 'response.refusal.delta': {
        if (typeof data.delta === 'string') streamedText.push(data.delta)
        // `delta(index)` written out: this is the event of nearly every token.
        const state = items.get(data.output_index) ?? stateOf(data.output_index)
        state.streamed = true
        if (data.type === 'response.refusal.delta') return out.refusal(data.delta ?? '', state.text)
        return out.text(data.delta ?? '', state.text)
      }
      case 'response.output_text.annotation.added': {
        const state = stateOf(data.output_index)
        if (!isFieldObject(data.annotation) || state.done) return
        state.annotated++
        return out.citations([citationOfAnnotation(data.annotation)], state.text)
      }
      case 'response.reasoning_summary_part.added':
        // Each summary is its own thinking part, and goes back as its own summary entry.
        if (data.summary_index) out.endBlock()
        return
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        delta(data.output_index)
        return out.thinking(data.delta ?? '')
      case 'response.function_call_arguments.delta':
        delta(data.output_index)
        return out.toolCallArgs(data.output_index, data.delta ?? '')
      case 'response.function_call_arguments.done': {
        const state = items.get(data.output_index)
        if (state && !state.streamed && data.arguments) {
          state.streamed = true
          out.toolCallArgs(data.output_index, data.arguments)
        }
        return
      }
      case 'response.output_item.done':
        if (data.item) finish(data.output_index, data.item, out)
        return
      case 'response.completed':
      case 'response.incomplete': {
        const response = data.response ?? {}
        // The id the response ended with: a proxy (GitHub Copilot) gives each event its own.
        out.responseId(response.id, { final: true })
        const output = response.output ?? []
        for (let i = 0; i < output.length; i++) {
          const item = output[i]!
          if (!items.has(i) && !mappedBefore(item, seenIds, streamedText)) finish(i, item, out)
        }
        if (response.usage) out.usage(responsesUsage(response.usage))
        if (data.type === 'response.completed') out.closeToolCalls()
        const raw =
          data.type === 'response.completed'
            ? 'completed'
            : (response.incomplete_details?.reason ?? 'incomplete')
        out.stop(raw, responsesStopReason(raw, calls))
        // Both are terminal: the response is over whatever its status.
        return out.complete()
      }
      case 'response.failed': {
        // A failed response can still report what it was billed (the input it read).
        const usage = data.response?.usage
        if (usage) out.usage(responsesUsage(usage))
        throw errorFromPayload(data.response?.error ?? { message: 'the response failed' }, errors)
      }
      case 'error':
        throw errorFromPayload(errorEventBody(data), errors)
      default:
        return
    }
  }
}

/**
 * An `error` event's error: nested under `error` (as OpenAI sends it), or its own `code` and
 * `message` (as the API reference documents it). Read without the event's `type`, which would
 * otherwise stand in for a `code` the provider sent as null.
 */
function errorEventBody(event: { error?: unknown; code?: unknown; message?: unknown }): unknown {
  const nested = event.error
  if ((typeof nested === 'object' && nested !== null) || typeof nested === 'string') return nested
  return { code: event.code, message: event.message }
}

/**
 * Whether a `response.completed` output item at an index no event used was mapped anyway, under
 * another index: the same item or call id, or message text that already streamed. Mapping it
 * again would send the same text twice.
 */
function mappedBefore(item: ResponsesOutputItem, seenIds: Set<string>, streamedText: string[]): boolean {
  if (typeof item.id === 'string' && seenIds.has(item.id)) return true
  if (typeof item.call_id === 'string' && seenIds.has(item.call_id)) return true
  if (item.type !== 'message') return false
  let text = ''
  for (const part of item.content ?? []) text += part.text ?? part.refusal ?? ''
  return text !== '' && streamedText.length > 0 && joined(streamedText).includes(text)
}

/** The pieces as one string, which then replaces them (so a later call does not join again). */
function joined(pieces: string[]): string {
  if (pieces.length > 1) pieces.splice(0, pieces.length, pieces.join(''))
  return pieces[0]!
}

/** An item that streamed no deltas, reported whole from its final form. */
function mapWhole(index: number, item: ResponsesOutputItem, state: ItemState, out: ResponseBuilder): void {
  switch (item.type) {
    case 'message': {
      let text = ''
      let refused = false
      for (const part of item.content ?? []) {
        text += part.text ?? part.refusal ?? ''
        if (part.text === undefined && typeof part.refusal === 'string') refused = true
      }
      if (refused) out.refusal(text, state.text)
      else out.text(text, state.text)
      return
    }
    case 'reasoning':
      for (const summary of item.summary ?? []) {
        out.thinking(summary.text ?? '')
        out.endBlock()
      }
      for (const part of item.content ?? []) out.thinking(part.text ?? '')
      return
    case 'function_call':
      if (item.arguments) out.toolCallArgs(index, item.arguments)
      return
    default:
      return
  }
}

/**
 * A finished message's annotations, as citations: `url_citation` (a web search's page),
 * `file_citation` and `container_file_citation` (a file's name), and any other type, each kept
 * whole as sent (its character span is in its own `output_text`). `undefined` when there are none.
 */
function citationsOf(item: ResponsesOutputItem): Citation[] | undefined {
  let out: Citation[] | undefined
  for (const part of item.content ?? []) {
    const annotations = part?.annotations
    if (!Array.isArray(annotations)) continue
    for (const raw of annotations as unknown[]) {
      if (!isFieldObject(raw)) continue
      out ??= []
      out.push(citationOfAnnotation(raw))
    }
  }
  return out
}

/** One annotation as a citation: a file citation's name is its title. */
function citationOfAnnotation(raw: Record<string, unknown>): Citation {
  const title = typeof raw.title === 'string' ? raw.title : raw.filename
  return citationOf('openai-responses', raw, { url: raw.url, title })
}

function textItemOf(item: ResponsesOutputItem): TextItem {
  const text: TextItem = {}
  if (item.id) text.itemId = item.id
  if (item.phase) text.phase = item.phase
  return text
}

/**
 * Responses usage -> Kode usage; inclusive already, except on servers whose total shows the output
 * count leaves reasoning out (see `inclusiveOutput`).
 */
export function responsesUsage(usage: ResponsesUsage): Usage {
  const reasoning = usage.output_tokens_details?.reasoning_tokens
  return usageOf(
    usage.input_tokens,
    inclusiveOutput(usage.input_tokens, usage.output_tokens, reasoning, usage.total_tokens),
    usage.input_tokens_details?.cached_tokens,
    usage.input_tokens_details?.cache_write_tokens,
    reasoning,
  )
}

/**
 * How the response ended -> Kode's stop reason: `completed` is `stop`, or `tool_use` when it called
 * tools; the incomplete reason `max_output_tokens` is `length`; other reasons (`content_filter`)
 * have none.
 */
export function responsesStopReason(raw: string, calledTools: boolean): StopReason | undefined {
  switch (raw) {
    case 'completed':
      return calledTools ? 'tool_use' : 'stop'
    case 'max_output_tokens':
      return 'length'
    default:
      return undefined
  }
}
