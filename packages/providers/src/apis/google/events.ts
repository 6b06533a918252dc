import type { Citation, StopDetails, StopReason, Usage } from '@kode/protocol'
import type { EventMapper, ResponseBuilder } from '../../adapter/spec.js'
import { type ErrorContext, errorFromPayload, parseEventJson } from '../../transport/failures.js'
import { citationOf, isFieldObject } from '../shared/citations.js'
import { count } from '../shared/counts.js'
import { type CodeExecutionParts, codeExecutionBlock } from './code-execution.js'
import { type PartialArg, StreamedArgs } from './partial-args.js'

/** The fields of a `GenerateContentResponse` chunk Kode reads; every one may be missing. */
export interface GoogleChunk {
  candidates?: GoogleCandidate[] | null
  usageMetadata?: GoogleUsage | null
  /** Set when the prompt itself was blocked; then there are no candidates. */
  promptFeedback?: { blockReason?: string; blockReasonMessage?: string } | null
  responseId?: string
  error?: unknown
}

interface GoogleCandidate {
  content?: { parts?: GoogleResponsePart[] | null } | null
  finishReason?: string
  /** Why it finished, in words (the malformed call of `MALFORMED_FUNCTION_CALL`). */
  finishMessage?: string
  /** With `SAFETY`, the rating that blocked the answer has `blocked: true`. */
  safetyRatings?: { category?: string; blocked?: boolean }[] | null
  /** With Google Search (or another grounding source): the sources, and which text each supports. */
  groundingMetadata?: unknown
  /**
   * The sources the text recites: `citationSources` on the Gemini API, `citations` on Vertex AI,
   * each `{ startIndex, endIndex, uri, title?, license? }`. Chunks repeat earlier ones.
   */
  citationMetadata?: { citationSources?: unknown; citations?: unknown } | null
}

/** One part of a streamed candidate. `thoughtSignature` may sit on any of them. */
interface GoogleResponsePart extends CodeExecutionParts {
  text?: string
  /** The text is a thought summary. */
  thought?: boolean
  thoughtSignature?: string
  functionCall?: {
    id?: string
    name?: string
    args?: Record<string, unknown> | null
    /** Gemini 3 streams arguments in pieces; the call ends with a part without `willContinue`. */
    partialArgs?: PartialArg[] | null
    willContinue?: boolean | null
  }
  inlineData?: { mimeType?: string; data?: string }
}

/**
 * Gemini's usage counts: `promptTokenCount` includes cached tokens; thoughts and the prompts of
 * tools Gemini runs itself (Google Search, URL context) are counted apart.
 */
export interface GoogleUsage {
  promptTokenCount?: number
  /** What Gemini's own tools read (a fetched page, search results): billed as input. */
  toolUsePromptTokenCount?: number
  candidatesTokenCount?: number
  thoughtsTokenCount?: number
  cachedContentTokenCount?: number
}

/**
 * The `streamGenerateContent?alt=sse` stream: `data:` chunks with no terminal event, so a finish
 * reason (or a blocked prompt) is what completes the response. Thought parts become thinking, a
 * `thoughtSignature` becomes a whole signature part right after the part it signs, and function
 * calls get deterministic ids when Gemini gives none: `call_<responseId>_<n>` for the n-th call of
 * the response (`call_<name>_<n>` without a response id); an id Gemini gave is also kept in the
 * call's `google` provider fields, to go back to it. Calls whose arguments stream as
 * `partialArgs` are assembled and closed when their last piece arrives. A finish's `finishMessage`
 * and blocking safety category, or a blocked prompt's `blockReasonMessage`, become `stopDetails`.
 * Grounding metadata (Google Search) and the sources the text recites (`citationMetadata`) become
 * citations on the text when the candidate finishes, or when the response ends before it (cut,
 * failed, aborted).
 */
export function createGoogleEventMapper(errors: ErrorContext): EventMapper {
  let responseId: string | undefined
  // The last usage metadata with a count in it, converted only when the message is built: Gemini
  // repeats its usage on every chunk, and only the latest matters.
  let counted: GoogleUsage | undefined
  const readUsage = () => (counted === undefined ? undefined : googleUsage(counted))
  let calls = 0
  let grounding: unknown
  const recited = new RecitedSources()
  // The grounding and recited sources so far, as citations: at the finish, or when the response
  // ends before it.
  const reportSources = (out: ResponseBuilder) => {
    const citations = grounding === undefined ? [] : groundingCitations(grounding)
    grounding = undefined
    citations.push(...recited.take())
    if (citations.length > 0) out.citations(citations)
  }
  let reporting = false
  const reportAtEnd = (out: ResponseBuilder) => {
    if (reporting) return
    reporting = true
    out.atEnd(reportSources)
  }
  let streaming: { key: number; args: StreamedArgs } | undefined
  const endStreamed = (out: ResponseBuilder) => {
    if (!streaming) return
    out.toolCallArgs(streaming.key, JSON.stringify(streaming.args.value))
    out.endBlock(streaming.key)
    streaming = undefined
  }
  const mapCall = (call: NonNullable<GoogleResponsePart['functionCall']>, out: ResponseBuilder) => {
    if (call.name) {
      endStreamed(out)
      const key = calls++
      out.toolCall(key, call.id || `call_${responseId ?? call.name}_${key}`, call.name)
      // Gemini's own id, kept apart from the id Kode may have made up (see `googleCallId`).
      if (call.id) out.toolCallFields(key, { format: 'google', fields: { id: call.id } })
      if (call.willContinue) {
        streaming = { key, args: new StreamedArgs() }
        if (call.partialArgs) streaming.args.add(call.partialArgs)
        return
      }
      // A whole call: without `args` it has none, also in a response the output limit ended.
      out.toolCallArgs(key, call.args ? JSON.stringify(call.args) : '{}')
      out.endBlock(key)
    } else if (streaming) {
      if (call.partialArgs) streaming.args.add(call.partialArgs)
      if (!call.willContinue) endStreamed(out)
    }
  }

  const mapPart = (part: GoogleResponsePart, out: ResponseBuilder) => {
    if (part.functionCall) mapCall(part.functionCall, out)
    else if (typeof part.text === 'string') {
      if (part.thought) out.thinking(part.text)
      else out.text(part.text)
    } else if (part.inlineData?.data) {
      const { mimeType = 'application/octet-stream', data } = part.inlineData
      out.image({ type: 'image_url', url: `data:${mimeType};base64,${data}` })
    } else if (part.executableCode !== undefined || part.codeExecutionResult !== undefined) {
      // Code Gemini ran itself (the code execution tool) and its output: never a call of ours.
      const block = codeExecutionBlock(part)
      if (block) out.serverTool('google', block)
    }
    if (part.thoughtSignature) {
      // Whole signatures, one per signed part: never joined with the one before.
      out.endBlock()
      out.signature(part.thoughtSignature, { format: 'google' })
    }
  }

  return (event, out) => {
    const chunk = parseEventJson(event.data, errors) as GoogleChunk
    if (chunk.error) throw errorFromPayload(chunk, errors)
    if (chunk.responseId) {
      responseId ??= chunk.responseId
      out.responseId(chunk.responseId)
    }
    const metadata = chunk.usageMetadata
    if (metadata && hasCounts(metadata)) {
      if (counted === undefined) out.usageFrom(readUsage)
      counted = metadata
    }
    const candidate = chunk.candidates?.[0]
    const parts = candidate?.content?.parts
    // Indexed for the usual array: `for...of` costs an iterator per chunk, and chunks come once per
    // token. Anything else goes through `for...of`, which fails on a value that is not iterable.
    if (Array.isArray(parts)) for (let i = 0; i < parts.length; i++) mapPart(parts[i]!, out)
    else if (parts) for (const part of parts as Iterable<GoogleResponsePart>) mapPart(part, out)
    // Sent again as it grows on some chunks: the last one is complete. A response cut before its
    // finish keeps what came.
    if (candidate?.groundingMetadata) {
      reportAtEnd(out)
      grounding = candidate.groundingMetadata
    }
    const cited = candidate?.citationMetadata
    if (cited && recited.add(cited.citationSources ?? cited.citations)) reportAtEnd(out)
    const finish = candidate?.finishReason
    if (finish) {
      reportSources(out)
      // A call still streaming when the model stops normally lost only its closing part; cut by
      // MAX_TOKENS it stays open and is marked incomplete.
      if (finish !== 'MAX_TOKENS') endStreamed(out)
      out.stop(finish, googleStopReason(finish, calls > 0), finishDetails(candidate))
    } else if (!candidate && chunk.promptFeedback?.blockReason) {
      const explanation = chunk.promptFeedback.blockReasonMessage
      out.stop(
        chunk.promptFeedback.blockReason,
        undefined,
        typeof explanation === 'string' && explanation ? { explanation } : undefined,
      )
    }
  }
}

/**
 * Grounding metadata as citations, one per grounding chunk in order: its page (`web`), retrieved
 * document (`retrievedContext`, whose `text` is the passage) or place (`maps`), with the chunk as
 * sent plus the `groundingSupports` that rely on it (the spans of the answer it supports). Kept on
 * the response's last text.
 */
function groundingCitations(metadata: unknown): Citation[] {
  if (typeof metadata !== 'object' || metadata === null) return []
  const { groundingChunks, groundingSupports } = metadata as Record<string, unknown>
  if (!Array.isArray(groundingChunks)) return []
  const supports = Array.isArray(groundingSupports) ? (groundingSupports as unknown[]) : []
  const out: Citation[] = []
  for (let i = 0; i < groundingChunks.length; i++) {
    const chunk: unknown = groundingChunks[i]
    if (!isFieldObject(chunk)) continue
    const fields: Record<string, unknown> = { ...chunk }
    const found = fields.web ?? fields.retrievedContext ?? fields.maps
    const source = isFieldObject(found) ? found : {}
    const relying = supports.filter((support) => supportsChunk(support, i))
    if (relying.length > 0) fields.groundingSupports = relying
    out.push(citationOf('google', fields, { url: source.uri, title: source.title, citedText: source.text }))
  }
  return out
}

/**
 * The sources of `citationMetadata`, each kept once in the order it first came (a chunk lists again
 * those an earlier chunk did), as citations whose `url` is the source's `uri`.
 */
class RecitedSources {
  private readonly seen = new Set<string>()
  private pending: Citation[] = []

  /** Whether `sources` held one not seen before. */
  add(sources: unknown): boolean {
    if (!Array.isArray(sources)) return false
    const before = this.pending.length
    for (const source of sources as unknown[]) {
      if (!isFieldObject(source)) continue
      const key = JSON.stringify(source)
      if (this.seen.has(key)) continue
      this.seen.add(key)
      this.pending.push(citationOf('google', source, { url: source.uri, title: source.title }))
    }
    return this.pending.length > before
  }

  /** The sources not reported yet. */
  take(): Citation[] {
    const out = this.pending
    this.pending = []
    return out
  }
}

function supportsChunk(support: unknown, index: number): boolean {
  if (typeof support !== 'object' || support === null) return false
  const indices = (support as { groundingChunkIndices?: unknown }).groundingChunkIndices
  return Array.isArray(indices) && indices.includes(index)
}

/**
 * What a finished candidate says beyond its reason: `finishMessage` as the explanation, and the
 * category of the safety rating that blocked it; `undefined` when it says neither.
 */
function finishDetails(candidate: GoogleCandidate): StopDetails | undefined {
  const details: StopDetails = {}
  const ratings = candidate.safetyRatings
  if (Array.isArray(ratings)) {
    const blocking = ratings.find((r) => r?.blocked === true && typeof r.category === 'string')
    if (blocking) details.category = blocking.category!
  }
  if (typeof candidate.finishMessage === 'string' && candidate.finishMessage)
    details.explanation = candidate.finishMessage
  return details.category === undefined && details.explanation === undefined ? undefined : details
}

/**
 * `finishReason` -> Kode's stop reason: `STOP` is `tool_use` when the response called tools,
 * `MAX_TOKENS` is `length`; `SAFETY`, `RECITATION`, `MALFORMED_FUNCTION_CALL` and the rest have none.
 */
export function googleStopReason(finish: string, calledTools: boolean): StopReason | undefined {
  switch (finish) {
    case 'STOP':
      return calledTools ? 'tool_use' : 'stop'
    case 'MAX_TOKENS':
      return 'length'
    default:
      return undefined
  }
}

/** Whether `usage` holds a count: exactly when {@link googleUsage} makes a usage of it. */
function hasCounts(usage: GoogleUsage): boolean {
  return (
    count(usage.promptTokenCount) !== undefined ||
    count(usage.toolUsePromptTokenCount) !== undefined ||
    count(usage.candidatesTokenCount) !== undefined ||
    count(usage.thoughtsTokenCount) !== undefined ||
    count(usage.cachedContentTokenCount) !== undefined
  )
}

/**
 * Gemini usage -> Kode usage: input is `promptTokenCount` (cached tokens included) plus
 * `toolUsePromptTokenCount` (not part of it, and billed as input), output is candidates plus
 * thoughts, reasoning is thoughts. `undefined` when nothing is counted yet
 * (Gemini sends `usageMetadata` without counts on early chunks).
 */
export function googleUsage(usage: GoogleUsage): Usage | undefined {
  const prompt = count(usage.promptTokenCount)
  const toolPrompt = count(usage.toolUsePromptTokenCount)
  const input =
    prompt === undefined && toolPrompt === undefined ? undefined : (prompt ?? 0) + (toolPrompt ?? 0)
  const candidates = count(usage.candidatesTokenCount)
  const thoughts = count(usage.thoughtsTokenCount)
  const cached = count(usage.cachedContentTokenCount)
  // Checked before allocating: most streamed chunks carry usage metadata without counts.
  if (input === undefined && candidates === undefined && thoughts === undefined && cached === undefined)
    return undefined
  const out: Usage = {}
  if (input !== undefined) out.inputTokens = input
  if (candidates !== undefined || thoughts !== undefined)
    out.outputTokens = (candidates ?? 0) + (thoughts ?? 0)
  if (cached !== undefined) out.cacheReadTokens = cached
  if (thoughts !== undefined) out.reasoningTokens = thoughts
  return out
}
