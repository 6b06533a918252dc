import type { Citation, StopReason, Usage } from '@kode/protocol'
import type { EventMapper, ResponseBuilder } from '../../adapter/spec.js'
import { type ErrorContext, errorFromPayload, parseEventJson } from '../../transport/failures.js'
import { citationOf, isFieldObject } from '../shared/citations.js'
import { inclusiveOutput, usageOf } from '../shared/counts.js'

/** The fields of a `chat.completion.chunk` Kode reads; every one may be missing or null. */
export interface ChatChunk {
  id?: string | null
  error?: unknown
  choices?: ChatChoice[] | null
  usage?: ChatUsage | null
}

interface ChatChoice {
  delta?: ChatDelta | null
  finish_reason?: string | null
}

export interface ChatDelta {
  /** A string; Mistral's reasoning models send a list of chunks (see {@link mapContentChunks}). */
  content?: string | ContentChunk[] | null
  refusal?: string | null
  /** DeepSeek, vLLM, LM Studio. */
  reasoning_content?: string | null
  /** OpenRouter, Groq, Ollama. */
  reasoning?: string | null
  /** Some gateways. */
  reasoning_text?: string | null
  tool_calls?: ChatToolCallDelta[] | null
  /** OpenRouter image output. */
  images?: { type?: string; image_url?: { url?: string } }[] | null
  /** The sources a search model or OpenRouter's web search cited (`url_citation`). */
  annotations?: unknown
}

/** One chunk of a Mistral content list: text, thinking (itself a list of text chunks), or other. */
interface ContentChunk {
  type?: string
  text?: string
  thinking?: string | { type?: string; text?: string }[]
}

interface ChatToolCallDelta {
  index?: number
  id?: string | null
  /** `arguments` is JSON text; some servers (llama.cpp, TGI) send the object itself. */
  function?: { name?: string | null; arguments?: string | Record<string, unknown> | null } | null
}

export interface ChatUsage {
  prompt_tokens?: number
  completion_tokens?: number
  /** With it, whether `completion_tokens` includes reasoning is read from the arithmetic. */
  total_tokens?: number
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null
  completion_tokens_details?: { reasoning_tokens?: number } | null
  /** DeepSeek reports cache hits here (and also in `prompt_tokens_details`). */
  prompt_cache_hit_tokens?: number
  /** OpenRouter: the cost of this response in USD. */
  cost?: number
}

/** The delta fields servers stream reasoning in, in the order {@link mapChatChunk} reads them. */
const REASONING_FIELDS = ['reasoning_content', 'reasoning', 'reasoning_text'] as const
type ReasoningField = (typeof REASONING_FIELDS)[number]

/**
 * The Chat Completions stream: `data: <chunk>` events, then `data: [DONE]`. A response whose
 * server streamed a reasoning field that stayed empty (DeepSeek's thinking mode, a call made
 * without reasoning) keeps that field, empty, in the message's `openai-chat` provider fields: the
 * field goes back with the message, which DeepSeek requires of every tool-calling turn. The field
 * is the one the first delta carries (DeepSeek opens every response with it), so a server that
 * streams none costs one check per chunk.
 */
export function createChatEventMapper(errors: ErrorContext): EventMapper {
  // Whether the response may still end with its reasoning field empty, and that field.
  let watching = true
  let field: ReasoningField | undefined
  return (event, out) => {
    if (event.data === '[DONE]') {
      out.complete()
      return
    }
    const chunk = parseEventJson(event.data, errors) as ChatChunk
    mapChatChunk(chunk, out, errors)
    if (!watching) return
    const choice = chunk.choices?.[0]
    const delta = choice?.delta
    if (field === undefined) {
      if (!delta) return
      field = streamedReasoningField(delta)
      if (field === undefined) {
        watching = false
        return
      }
    }
    const value = delta?.[field]
    if (typeof value === 'string' && value !== '') watching = false
    else if (choice?.finish_reason) {
      watching = false
      out.responseFields({ format: 'openai-chat', fields: { [field]: '' } })
    }
  }
}

/** The first reasoning field `delta` carries as a string, even an empty one. */
function streamedReasoningField(delta: ChatDelta): ReasoningField | undefined {
  for (const name of REASONING_FIELDS) if (typeof delta[name] === 'string') return name
  return undefined
}

/**
 * One chunk onto the builder. Chunks without choices (Azure `prompt_filter_results`, the final
 * usage-only chunk) carry only metadata. Reasoning comes in `reasoning_content`, `reasoning` or
 * `reasoning_text` depending on the server; tool calls accumulate by `index`; `annotations` become
 * citations.
 *
 * The delta is read here rather than in a helper of its own. This runs for every chunk, and as one
 * function too large to inline, V8's optimizing compiler compiles it once; split in two, each part
 * was also compiled again inside every caller it was inlined into (in the agents benchmark's
 * 50-turn task without a network, 6 ms of the 35 ms the compiler spent).
 */
export function mapChatChunk(chunk: ChatChunk, out: ResponseBuilder, errors: ErrorContext): void {
  if (chunk.error) throw errorFromPayload(chunk, errors)
  out.responseId(chunk.id)
  if (chunk.usage) out.usage(chatUsage(chunk.usage))
  const choice = chunk.choices?.[0]
  if (!choice) return
  const delta = choice.delta
  if (delta) {
    const reasoning = delta.reasoning_content || delta.reasoning || delta.reasoning_text
    if (typeof reasoning === 'string') out.thinking(reasoning)
    if (typeof delta.content === 'string') out.text(delta.content)
    else if (Array.isArray(delta.content)) mapContentChunks(delta.content, out)
    if (typeof delta.refusal === 'string') out.refusal(delta.refusal)
    const calls = delta.tool_calls
    if (calls) {
      for (let i = 0; i < calls.length; i++) {
        const call = calls[i]!
        const key = typeof call.index === 'number' ? call.index : i
        const fn = call.function
        if (call.id || fn?.name) out.toolCall(key, call.id, fn?.name)
        const args = fn?.arguments
        if (typeof args === 'string') {
          if (args) out.toolCallArgs(key, args)
        } else if (typeof args === 'object' && args !== null && !Array.isArray(args))
          out.toolCallArgs(key, JSON.stringify(args))
      }
    }
    if (delta.images) {
      for (const image of delta.images) {
        const url = image.image_url?.url
        if (url) out.image({ type: 'image_url', url })
      }
    }
    if (delta.annotations) mapAnnotations(delta.annotations, out)
  }
  const finish = choice.finish_reason
  if (finish) {
    out.stop(finish, chatStopReason(finish))
    // After `length` a call may be cut before its arguments began, so only other finishes close calls.
    if (finish !== 'length') out.closeToolCalls()
  }
}

/**
 * A content list (Mistral's Magistral models): `text` chunks are answer text, `thinking` chunks
 * (whose `thinking` is a list of text chunks, or a string) are reasoning; other chunk types
 * (`reference`) and values of other types are ignored.
 */
function mapContentChunks(chunks: ContentChunk[], out: ResponseBuilder): void {
  for (const chunk of chunks) {
    if (typeof chunk !== 'object' || chunk === null) continue
    if (chunk.type === 'text' && typeof chunk.text === 'string') out.text(chunk.text)
    else if (chunk.type === 'thinking') {
      const thinking = chunk.thinking
      if (typeof thinking === 'string') out.thinking(thinking)
      else if (Array.isArray(thinking))
        for (const piece of thinking)
          if (piece?.type === 'text' && typeof piece.text === 'string') out.thinking(piece.text)
    }
  }
}

/**
 * `annotations` as citations, kept on the text streamed so far: `url_citation` (its `url_citation`
 * holds the page's URL, title and character span) and any other type, each kept whole as sent.
 */
function mapAnnotations(annotations: unknown, out: ResponseBuilder): void {
  if (!Array.isArray(annotations)) return
  const citations: Citation[] = []
  for (const raw of annotations as unknown[]) {
    if (!isFieldObject(raw)) continue
    const source = isFieldObject(raw.url_citation) ? raw.url_citation : {}
    citations.push(citationOf('openai-chat', raw, { url: source.url, title: source.title }))
  }
  out.citations(citations)
}

/** `finish_reason` -> Kode's stop reason; `content_filter` and unknown values have none. */
export function chatStopReason(finish: string): StopReason | undefined {
  switch (finish) {
    case 'stop':
      return 'stop'
    case 'length':
      return 'length'
    case 'tool_calls':
    case 'function_call':
      return 'tool_use'
    case 'error':
      return 'error'
    default:
      return undefined
  }
}

/**
 * Chat usage -> Kode usage. Prompt counts include cache reads; completion counts include reasoning,
 * except on servers whose total shows they do not (see `inclusiveOutput`).
 */
export function chatUsage(usage: ChatUsage): Usage {
  const reasoning = usage.completion_tokens_details?.reasoning_tokens
  return usageOf(
    usage.prompt_tokens,
    inclusiveOutput(usage.prompt_tokens, usage.completion_tokens, reasoning, usage.total_tokens),
    usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens,
    usage.prompt_tokens_details?.cache_write_tokens,
    reasoning,
  )
}
